#pragma once
// A cluster as the network and power models see it: identical nodes of GPUs joined by a node
// fabric, nodes joined by NICs through an inter-node topology (topologies/topology.hpp builds
// the graph from this description).
#include <optional>
#include <string>
#include <vector>

#include "hw/cpu_spec.hpp"
#include "hw/fabric_spec.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/nic_spec.hpp"

namespace exasim::topologies {

// Nodes whose NICs differ from the cluster's (a mix of NIC types), in node order.
struct NicGroup {
  int nodes = 0;
  hw::NicSpec nic;
  int nics_per_node = 1;
};

struct DragonflyShape {
  int groups = 0;                   // 0: derived from the node count
  int routers_per_group = 0;        // 0: derived
  int global_links_per_router = 0;  // 0: derived (enough to join every pair of groups)
};

struct InterNode;

// One cluster of a multi-cluster system: `nodes` nodes on their own network.
struct ClusterPart {
  int nodes = 0;
  std::vector<InterNode> network;  // exactly one element (a vector only to allow the recursion)
};

struct InterNode {
  // fat-tree | rail-optimized | single-switch | dragonfly | torus | multi-cluster
  // (topologies/topology_registry.cpp lists them with help).
  std::string topology = "fat-tree";
  hw::NicSpec nic;
  int nics_per_node = 1;
  // B/s per direction of a GPU's PCIe path to its NIC; 0: as fast as the NIC (the reader fills
  // in the GPU's PCIe link from the catalog).
  double gpu_nic_bandwidth = 0;
  double oversubscription = 1.0;  // leaf-tier down:up port ratio (>= 1; 1 = non-blocking)
  int switch_radix = 0;           // ports per switch; 0: 64 (NVIDIA Quantum-2 QM9700, 64 x 400G)
  int tiers = 0;                  // fat-tree tiers 2 or 3; 0: the fewest that fit the radix
  DragonflyShape dragonfly;
  std::vector<int> torus_dims;    // 2 or 3 dimensions whose product is the node count
  std::vector<NicGroup> nic_groups;  // mixed NIC types; empty: every node has `nic`
  std::vector<ClusterPart> parts;    // multi-cluster: the clusters, in node order
  double join_bandwidth = 0;         // multi-cluster: B/s per direction between two clusters
  double join_latency = 0;           // s, one way
};

// The host side of a node, for work that leaves the GPUs (optimizer offload): its CPUs, their
// memory, and each GPU's PCIe link to them.
struct HostSide {
  hw::CpuSpec cpu;
  int cpus_per_node = 1;
  double memory_bytes = 0;    // host DRAM per node; 0: not stated
  double pcie_bandwidth = 0;  // B/s per direction between one GPU and the host
  double nvme_read = 0, nvme_write = 0;  // B/s per node, its local NVMe drives together (0: not stated)
  int gpus_per_node = 1;      // GPUs that share these CPUs
};

struct Cluster {
  hw::GpuSpec gpu;
  int gpus_per_node = 1;
  int nodes = 1;
  hw::FabricSpec intra;
  std::optional<InterNode> inter;     // absent for a single node
  double node_power_other_w = 0;      // CPUs, NICs, fans per node at load
  std::optional<HostSide> host;       // from the catalog server (cluster.node, or the one carrying this GPU)

  int gpu_count() const { return gpus_per_node * nodes; }
  int node_of(int rank) const { return rank / gpus_per_node; }
  // Bandwidth (B/s per direction) one GPU can push off its node when `sharing` GPUs of the node
  // use the NICs at once: the NICs are shared evenly, and one GPU uses at most one NIC rail.
  // (The closed-form collective model's view; the topology has the exact links.)
  double nic_bandwidth_per_gpu(int sharing) const;
};

}  // namespace exasim::topologies
