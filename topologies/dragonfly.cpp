// Dragonfly (Kim et al., ISCA 2008; HPE Slingshot): groups of routers joined all-to-all by local
// links, groups joined to each other by global links. Every node's NICs sit on one router; each
// pair of groups gets the same number of global links, spread over the routers of each group.
// Minimal routing (shortest path) takes local, global, local hops.
#include <algorithm>
#include <cmath>
#include <string>

#include "hw/error.hpp"
#include "topologies/network_builders.hpp"

namespace exasim::topologies {

namespace {

struct Shape {
  int groups, routers, global_per_router, nodes_per_router;
};

Shape shape_of(const InterNode& spec, int nodes) {
  const DragonflyShape& d = spec.dragonfly;
  Shape s{};
  // Unset: the balanced dragonfly of Kim et al. (a = 2p = 2h) sized to the node count.
  s.groups = d.groups > 0 ? d.groups : std::max(2, static_cast<int>(std::ceil(std::sqrt(nodes / 2.0))));
  s.routers = d.routers_per_group > 0
                  ? d.routers_per_group
                  : std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(nodes) / s.groups))));
  s.global_per_router = d.global_links_per_router > 0 ? d.global_links_per_router
                                                      : std::max(1, (s.groups - 1 + s.routers - 1) / s.routers);
  s.nodes_per_router = (nodes + s.groups * s.routers - 1) / (s.groups * s.routers);
  if (s.routers * s.global_per_router < s.groups - 1) {
    throw ConfigError("a dragonfly of " + std::to_string(s.groups) + " groups needs at least " +
                          std::to_string(s.groups - 1) + " global links per group, has " +
                          std::to_string(s.routers * s.global_per_router),
                      {}, "raise dragonfly.global_links_per_router or routers_per_group, or use fewer groups");
  }
  return s;
}

}  // namespace

std::vector<Vertex> build_dragonfly(Topology& t, const InterNode& spec, const std::vector<NodeNics>& nodes,
                                    const std::string& prefix) {
  const Shape s = shape_of(spec, static_cast<int>(nodes.size()));
  const double bw = port_bandwidth(nodes);
  const double lat = switch_latency(nodes);
  std::vector<std::vector<Vertex>> routers(s.groups);
  for (int g = 0; g < s.groups; ++g) {
    for (int r = 0; r < s.routers; ++r)
      routers[g].push_back(add_switch(t, prefix + "g" + std::to_string(g) + "/r" + std::to_string(r), 1));
    for (int a = 0; a < s.routers; ++a)
      for (int b = a + 1; b < s.routers; ++b) connect_switches(t, routers[g][a], routers[g][b], 1, bw, lat);
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const int r = static_cast<int>(i) / s.nodes_per_router;
    const Vertex router = routers[r / s.routers][r % s.routers];
    for (Vertex port : nodes[i].ports) connect_port(t, port, router, nodes[i].nic);
  }
  // Global links: the same number between every pair of groups, dealt out to routers in turn.
  const int per_pair = std::max(1, s.routers * s.global_per_router / (s.groups - 1));
  std::vector<int> next(s.groups, 0);
  for (int a = 0; a < s.groups; ++a) {
    for (int b = a + 1; b < s.groups; ++b) {
      for (int k = 0; k < per_pair; ++k) {
        const Vertex ra = routers[a][next[a]++ % s.routers];
        const Vertex rb = routers[b][next[b]++ % s.routers];
        connect_switches(t, ra, rb, 1, bw, lat);
      }
    }
  }
  std::vector<Vertex> tops;
  for (const auto& group : routers) tops.push_back(group[0]);
  return tops;
}

}  // namespace exasim::topologies
