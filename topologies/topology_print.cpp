#include "topologies/topology_print.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "hw/units.hpp"
#include "topologies/routing.hpp"

namespace exasim::topologies {

namespace {

std::string bandwidth(double b) { return units::format(b, units::Dimension::kBandwidth, 3); }
std::string seconds(double s) { return units::format(s, units::Dimension::kTime, 3); }

std::string route_line(Router& router, const Topology& t, int a, int b) {
  const auto path = router.route(t.gpu(a), t.gpu(b));
  double narrowest = 0;
  for (ChannelId c : path) {
    const double bw = t.link(t.link_of(c)).bandwidth;
    narrowest = narrowest == 0 ? bw : std::min(narrowest, bw);
  }
  std::ostringstream s;
  s << "  gpu " << a << " -> gpu " << b << ": " << path.size() << " hops, " << seconds(router.latency(path))
    << ", narrowest link " << bandwidth(narrowest) << "\n";
  return s.str();
}

}  // namespace

std::string summarize(const Topology& t, const Cluster& c) {
  std::ostringstream s;
  s << "topology: " << (c.inter ? c.inter->topology : std::string("single node")) << ", " << c.nodes << " nodes x "
    << c.gpus_per_node << " GPUs, node fabric " << c.intra.name << " (" << c.intra.kind << ")\n";
  std::map<std::string, int> vertices;
  int switches = 0;
  for (std::size_t v = 0; v < t.vertex_count(); ++v) {
    const VertexInfo& info = t.vertex(v);
    std::string name(vertex_kind_name(info.kind));
    if (info.kind == VertexKind::kSwitch) {
      name += " tier " + std::to_string(info.tier);
      ++switches;
    }
    ++vertices[name];
  }
  s << "vertices:";
  for (const auto& [name, n] : vertices) s << " " << name << " " << n << ";";
  s << "\nnetwork switches: " << switches << "\nlinks:\n";
  std::map<std::pair<std::string, double>, std::pair<int, int>> links;  // (kind, bw) -> (links, physical)
  for (std::uint32_t id = 0; id < t.link_count(); ++id) {
    const LinkInfo& l = t.link(id);
    auto& n = links[{std::string(link_kind_name(l.kind)), l.bandwidth}];
    ++n.first;
    n.second += l.count;
  }
  for (const auto& [key, n] : links) {
    s << "  " << key.first << " " << bandwidth(key.second) << " per direction: " << n.first << " links";
    if (n.second != n.first) s << " (" << n.second << " physical)";
    s << "\n";
  }
  Router router(t);
  s << "routes:\n";
  if (c.gpus_per_node > 1) s << route_line(router, t, 0, 1);
  if (c.nodes > 1) s << route_line(router, t, 0, c.gpus_per_node);
  if (c.nodes > 2) s << route_line(router, t, 0, c.gpu_count() - 1);
  return s.str();
}

void write_dot(std::ostream& out, const Topology& t) {
  out << "graph topology {\n  node [shape=box, fontsize=10];\n";
  std::map<int, std::vector<std::size_t>> by_node;
  for (std::size_t v = 0; v < t.vertex_count(); ++v) by_node[t.vertex(v).node].push_back(v);
  for (const auto& [node, members] : by_node) {
    if (node >= 0) out << "  subgraph cluster_n" << node << " {\n    label=\"node " << node << "\";\n";
    for (std::size_t v : members) {
      const VertexInfo& info = t.vertex(v);
      out << (node >= 0 ? "    " : "  ") << "v" << v << " [label=\"" << info.name << "\"";
      if (info.kind == VertexKind::kGpu) out << ", shape=ellipse";
      out << "];\n";
    }
    if (node >= 0) out << "  }\n";
  }
  for (std::uint32_t id = 0; id < t.link_count(); ++id) {
    const auto [a, b] = t.ends(id);
    const LinkInfo& l = t.link(id);
    out << "  v" << a << " -- v" << b << " [label=\"" << bandwidth(l.bandwidth);
    if (l.count > 1) out << ", " << l.count << " links";
    out << "\"];\n";
  }
  out << "}\n";
}

}  // namespace exasim::topologies
