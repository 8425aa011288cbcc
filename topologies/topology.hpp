#pragma once
// A cluster's interconnect as a graph (Boost.Graph): GPUs, node-fabric switches, PCIe switches,
// host bridges, NICs and network switches, joined by full-duplex links. Parallel physical links
// between the same two switches are kept as one link of `count` times the port bandwidth.
// Every link has two directed channels (one per direction) with ids 2*link and 2*link + 1;
// routes are lists of channel ids.
#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/cluster.hpp"

namespace exasim::topologies {

enum class VertexKind : std::uint8_t { kGpu, kNvSwitch, kPcieSwitch, kHostBridge, kNic, kSwitch, kGateway };
enum class LinkKind : std::uint8_t {
  kNvlink,     // GPU to NVSwitch
  kXgmi,       // GPU to GPU (mesh)
  kPcie,       // GPU to PCIe switch to host bridge
  kHost,       // host bridge to host bridge (inter-socket)
  kNicAttach,  // GPU (or its PCIe switch) to its NIC
  kNetwork,    // NIC to switch and switch to switch
  kJoin,       // between the clusters of a multi-cluster system
};
std::string_view vertex_kind_name(VertexKind k);
std::string_view link_kind_name(LinkKind k);

struct VertexInfo {
  VertexKind kind = VertexKind::kSwitch;
  int node = -1;       // owning node; -1 for network switches
  int tier = 0;        // network switches: 1 = leaf (or router), 2 = spine/aggregation, 3 = core
  std::string name;
};

struct LinkInfo {
  LinkKind kind = LinkKind::kNetwork;
  double bandwidth = 0;  // B/s per direction, all `count` physical links together
  double latency = 0;    // s, one way
  int count = 1;         // physical links aggregated
  std::uint32_t id = 0;  // set by Topology::add_link
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, VertexInfo, LinkInfo>;
using Vertex = Graph::vertex_descriptor;
using ChannelId = std::uint32_t;

class Topology {
 public:
  Vertex add_vertex(VertexInfo info);
  // Adds a link, or widens the existing link between a and b by `info` (parallel links).
  std::uint32_t add_link(Vertex a, Vertex b, LinkInfo info);

  const Graph& graph() const { return g_; }
  std::size_t vertex_count() const { return boost::num_vertices(g_); }
  std::size_t link_count() const { return ends_.size(); }
  const VertexInfo& vertex(Vertex v) const { return g_[v]; }
  const LinkInfo& link(std::uint32_t id) const { return g_[edges_[id]]; }
  std::pair<Vertex, Vertex> ends(std::uint32_t id) const { return ends_[id]; }
  // The channel of link `id` that leaves `from`.
  ChannelId channel(std::uint32_t id, Vertex from) const { return 2 * id + (ends_[id].first == from ? 0 : 1); }
  std::uint32_t link_of(ChannelId c) const { return c / 2; }
  std::uint32_t link_between(Vertex a, Vertex b) const;  // throws if none

  // GPUs by global rank; the NVSwitch of a node (for in-switch reduction) if it has one.
  Vertex gpu(int rank) const { return gpus_[rank]; }
  int gpu_count() const { return static_cast<int>(gpus_.size()); }
  bool has_node_switch(int node) const { return node_switch_[node] != kNoVertex; }
  Vertex node_switch(int node) const { return node_switch_[node]; }
  int nodes() const { return static_cast<int>(node_switch_.size()); }
  // Vertices a route may pass through: switches, bridges and NICs, not GPUs.
  bool transit(Vertex v) const { return g_[v].kind != VertexKind::kGpu; }

  void set_nodes(int nodes) { node_switch_.assign(nodes, kNoVertex); }
  void add_gpu(Vertex v) { gpus_.push_back(v); }
  void set_node_switch(int node, Vertex v) { node_switch_[node] = v; }

  static constexpr Vertex kNoVertex = static_cast<Vertex>(-1);

 private:
  Graph g_;
  std::vector<Graph::edge_descriptor> edges_;
  std::vector<std::pair<Vertex, Vertex>> ends_;
  std::vector<Vertex> gpus_;
  std::vector<Vertex> node_switch_;
};

// Builds the graph of a cluster: every node's fabric, its NICs and the inter-node network.
// Throws ConfigError when the description cannot be built (a torus whose dimensions do not
// multiply to the node count, a dragonfly too small to join its groups, ...).
Topology build_topology(const Cluster& cluster);

}  // namespace exasim::topologies
