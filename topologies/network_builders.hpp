#pragma once
// Builders of the pieces of a Topology (internal to topologies/): a node's fabric, its NICs, and
// each inter-node network. The name -> builder table is topologies/topology_registry.hpp.
#include <string>
#include <vector>

#include "topologies/topology.hpp"

namespace exasim::topologies {

// The NIC ports of one node and their type.
struct NodeNics {
  std::vector<Vertex> ports;
  hw::NicSpec nic;
};

// Builds node `node`'s GPUs and fabric. Returns, per local GPU, the vertex its network traffic
// leaves from towards a NIC (the GPU itself, or the PCIe switch it sits under).
std::vector<Vertex> build_node_fabric(Topology& t, const Cluster& c, int node);

// Creates the NICs of nodes [first, first + count) as `spec` describes them (nic_groups give
// mixed types) and attaches each to its GPUs: GPU l uses NIC l*K/G when K <= G NICs serve G GPUs.
std::vector<NodeNics> attach_nics(Topology& t, const Cluster& c, const InterNode& spec, int first, int count,
                                  const std::vector<std::vector<Vertex>>& nic_side);

// What a registry builder gets: nodes [first, first + count) of the cluster, whose network
// traffic leaves each GPU from nic_side[node][local].
struct NetworkContext {
  Topology& t;
  const Cluster& cluster;
  const InterNode& spec;
  int first = 0;
  int count = 0;
  const std::vector<std::vector<Vertex>>& nic_side;
  std::string prefix;
};

// Builds the network `spec.topology` names (topology_registry.hpp) and returns its top-tier
// switches (where a multi-cluster gateway connects).
std::vector<Vertex> build_network(const NetworkContext& ctx);
std::vector<Vertex> build_multi_cluster(const NetworkContext& ctx);

// Network builders (one file each), all with the same signature.
using NetworkBuilder = std::vector<Vertex> (*)(Topology& t, const InterNode& spec, const std::vector<NodeNics>& nodes,
                                               const std::string& prefix);
std::vector<Vertex> build_fat_tree(Topology& t, const InterNode& spec, const std::vector<NodeNics>& nodes,
                                   const std::string& prefix);
std::vector<Vertex> build_rail_optimized(Topology& t, const InterNode& spec, const std::vector<NodeNics>& nodes,
                                         const std::string& prefix);
std::vector<Vertex> build_single_switch(Topology& t, const InterNode& spec, const std::vector<NodeNics>& nodes,
                                        const std::string& prefix);
std::vector<Vertex> build_dragonfly(Topology& t, const InterNode& spec, const std::vector<NodeNics>& nodes,
                                    const std::string& prefix);
std::vector<Vertex> build_torus(Topology& t, const InterNode& spec, const std::vector<NodeNics>& nodes,
                                const std::string& prefix);

// Shared by the builders: the fastest port of the network (switch-to-switch links run at it),
// the switch radix in use, a switch vertex, and the NIC-to-switch link.
double port_bandwidth(const std::vector<NodeNics>& nodes);
int switch_radix(const InterNode& spec);
Vertex add_switch(Topology& t, const std::string& name, int tier);
void connect_port(Topology& t, Vertex nic, Vertex sw, const hw::NicSpec& spec);
// A switch-to-switch trunk of `count` ports.
void connect_switches(Topology& t, Vertex a, Vertex b, int count, double port_bw, double latency);
double switch_latency(const std::vector<NodeNics>& nodes);

// Fat-tree tiers above the leaves (fat_tree.cpp): leaves with `up` uplinks each; 2 tiers (every
// leaf to every spine) when the leaves fit a spine's radix, else 3 (pods of radix/2 leaves,
// aggregation switches, cores). Returns the top tier.
std::vector<Vertex> build_upper_tiers(Topology& t, const std::vector<Vertex>& leaves, int up, int radix, int tiers,
                                      double port_bw, double latency, const std::string& prefix);

}  // namespace exasim::topologies
