#include <string>

#include "topologies/network_builders.hpp"

namespace exasim::topologies {

Topology build_topology(const Cluster& c) {
  Topology t;
  t.set_nodes(c.nodes);
  std::vector<std::vector<Vertex>> nic_side;
  nic_side.reserve(c.nodes);
  for (int node = 0; node < c.nodes; ++node) nic_side.push_back(build_node_fabric(t, c, node));
  if (c.inter) build_network({t, c, *c.inter, 0, c.nodes, nic_side, ""});
  return t;
}

}  // namespace exasim::topologies
