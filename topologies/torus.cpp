// 2D/3D torus: one router per node (its NICs attach to it), routers joined to their two
// neighbours in every dimension with wrap-around; each torus link runs at the NIC port rate.
// Shortest-path routing spreads over the equal-length dimension orders.
#include <functional>
#include <numeric>
#include <string>

#include "hw/error.hpp"
#include "topologies/network_builders.hpp"

namespace exasim::topologies {

std::vector<Vertex> build_torus(Topology& t, const InterNode& spec, const std::vector<NodeNics>& nodes,
                                const std::string& prefix) {
  const std::vector<int>& dims = spec.torus_dims;
  const long product = std::accumulate(dims.begin(), dims.end(), 1L, std::multiplies<long>());
  if ((dims.size() != 2 && dims.size() != 3) || product != static_cast<long>(nodes.size())) {
    throw ConfigError("a torus needs 2 or 3 dimensions whose product is the node count (" +
                          std::to_string(nodes.size()) + ")",
                      {}, "set cluster.inter_node.torus: [X, Y] or [X, Y, Z]");
  }
  const double bw = port_bandwidth(nodes);
  const double lat = switch_latency(nodes);
  std::vector<Vertex> routers;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    routers.push_back(add_switch(t, prefix + "router" + std::to_string(i), 1));
    for (Vertex port : nodes[i].ports) connect_port(t, port, routers.back(), nodes[i].nic);
  }
  // Node i has coordinates in mixed radix (first dimension fastest).
  long stride = 1;
  for (int size : dims) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const long coord = (static_cast<long>(i) / stride) % size;
      const long next = static_cast<long>(i) + ((coord + 1) % size - coord) * stride;
      if (size > 2 || (size == 2 && coord == 0)) connect_switches(t, routers[i], routers[next], 1, bw, lat);
    }
    stride *= size;
  }
  return {routers[0]};
}

}  // namespace exasim::topologies
