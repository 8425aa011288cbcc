#include "topologies/topology.hpp"

#include <array>
#include <stdexcept>

namespace exasim::topologies {

std::string_view vertex_kind_name(VertexKind k) {
  static constexpr std::array<std::string_view, 7> names = {"gpu", "nvswitch", "pcie-switch", "host-bridge",
                                                            "nic", "switch",   "gateway"};
  return names[static_cast<std::size_t>(k)];
}

std::string_view link_kind_name(LinkKind k) {
  static constexpr std::array<std::string_view, 7> names = {"nvlink", "xgmi",    "pcie", "host",
                                                            "nic",    "network", "join"};
  return names[static_cast<std::size_t>(k)];
}

Vertex Topology::add_vertex(VertexInfo info) { return boost::add_vertex(std::move(info), g_); }

std::uint32_t Topology::add_link(Vertex a, Vertex b, LinkInfo info) {
  if (auto [e, found] = boost::edge(a, b, g_); found) {
    LinkInfo& l = g_[e];
    l.bandwidth += info.bandwidth;
    l.count += info.count;
    return l.id;
  }
  info.id = static_cast<std::uint32_t>(edges_.size());
  const auto [e, added] = boost::add_edge(a, b, info, g_);
  (void)added;
  edges_.push_back(e);
  ends_.emplace_back(a, b);
  return static_cast<std::uint32_t>(edges_.size() - 1);
}

std::uint32_t Topology::link_between(Vertex a, Vertex b) const {
  if (auto [e, found] = boost::edge(a, b, g_); found) return g_[e].id;
  throw std::invalid_argument("Topology: no link between '" + g_[a].name + "' and '" + g_[b].name + "'");
}

}  // namespace exasim::topologies
