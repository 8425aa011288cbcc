#pragma once
// A cluster as the network and power models see it: identical nodes of GPUs joined by a node
// fabric, nodes joined by NICs through an inter-node topology.
#include <optional>
#include <string>

#include "hw/fabric_spec.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/nic_spec.hpp"

namespace exasim::topologies {

struct InterNode {
  std::string topology = "fat-tree";  // fat-tree | rail-optimized | single-switch | dragonfly | torus
  hw::NicSpec nic;
  int nics_per_node = 1;
  double oversubscription = 1.0;      // uplink oversubscription of the first switch tier (>= 1)
};

struct Cluster {
  hw::GpuSpec gpu;
  int gpus_per_node = 1;
  int nodes = 1;
  hw::FabricSpec intra;
  std::optional<InterNode> inter;     // absent for a single node
  double node_power_other_w = 0;      // CPUs, NICs, fans per node at load

  int gpu_count() const { return gpus_per_node * nodes; }
  int node_of(int rank) const { return rank / gpus_per_node; }
  // Bandwidth (B/s per direction) one GPU can push off its node when `sharing` GPUs of the node
  // use the NICs at once: the NICs are shared evenly, and one GPU uses at most one NIC rail.
  double nic_bandwidth_per_gpu(int sharing) const;
};

}  // namespace exasim::topologies
