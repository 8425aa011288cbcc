// One non-blocking switch (crossbar) for every NIC: the ideal network, whatever its radix.
#include "topologies/network_builders.hpp"

namespace exasim::topologies {

std::vector<Vertex> build_single_switch(Topology& t, const InterNode&, const std::vector<NodeNics>& nodes,
                                        const std::string& prefix) {
  const Vertex sw = add_switch(t, prefix + "switch", 1);
  for (const NodeNics& n : nodes)
    for (Vertex port : n.ports) connect_port(t, port, sw, n.nic);
  return {sw};
}

}  // namespace exasim::topologies
