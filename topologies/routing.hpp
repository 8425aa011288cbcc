#pragma once
// Routes between topology vertices: shortest paths by hop count that never pass through a GPU
// (and, between two parts of one node, stay inside the node's fabric, never looping through a
// NIC), with equal-cost choices spread by destination the way InfiniBand's fat-tree routing fills its
// forwarding tables (D-mod-k: at the i-th multi-way hop take choice (key / k1...k(i-1)) mod ki,
// key = the destination's rank). Deterministic: the same pair always gets the same route.
//
// Cost. A route needs every vertex's hop distance to its destination. Most vertices of a large
// cluster sit inside nodes that are "sealed": each piece of a node's fabric that a route may
// cross touches the network at one switch only (a DGX's NICs, each hanging off its own GPU), so
// no shortest path between two other vertices passes through it, and a vertex in it is exactly
// its hops to that switch plus the switch's distance. Distances are therefore searched over the
// "core" only (network switches, gateways, and every vertex of a node that is not sealed, such
// as a PCIe server whose NICs sit on different switches), once per switch a destination is
// entered through (its NIC's leaf), plus a search inside the destination's own node. A
// 16,384-GPU fat-tree has ~1,300 core vertices of ~37,000, and 512 leaves stand for its 16,384
// destinations. Routes are identical to those of a breadth-first search over the whole graph
// (tests/topologies/routing_test.cpp compares them).
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "topologies/topology.hpp"

namespace exasim::topologies {

class Router {
 public:
  explicit Router(const Topology& t);
  // Channels from src to dst in order; empty when src == dst. Throws std::runtime_error when dst
  // cannot be reached. The span stays valid for the Router's life.
  std::span<const ChannelId> route(Vertex src, Vertex dst);
  // Sum of the link latencies along a route.
  double latency(std::span<const ChannelId> route) const;
  const Topology& topology() const { return t_; }
  // Whether a route towards `dst` may reach `v` (in_node: the route stays inside dst's node).
  bool usable(Vertex v, Vertex dst, bool in_node) const;
  // Vertices whose distances each destination keeps (see above); for reports and benchmarks.
  std::size_t core_size() const { return core_.size(); }

 private:
  static constexpr std::uint16_t kFar = 0xffff;
  static constexpr std::int32_t kNone = -1;

  // Hop distances towards one destination. In-node routes: the node's vertices (by index in
  // the node). A destination in the core: the core (by core index). A destination in a sealed
  // node: its node's vertices, and for the core the nearest of the node's exit switches it
  // enters through (hops from the switch to dst, plus the switch's own field).
  struct Field {
    Vertex dst = 0;
    bool in_node = false;
    bool node_local = false;
    std::vector<std::uint16_t> dist;
    std::vector<std::pair<const std::vector<std::uint16_t>*, std::uint16_t>> exits;
  };
  const Field& field(Vertex dst, bool in_node);
  // Hops to `from` over the core alone, for every core vertex (a network switch's field).
  const std::vector<std::uint16_t>& core_field(Vertex from);
  void search(Vertex dst, bool in_node, std::vector<std::uint16_t>& dist);
  std::uint16_t core_distance(const Field& f, std::int32_t core_index) const;
  std::uint16_t distance(const Field& f, Vertex v) const;
  std::uint64_t key_of(Vertex v) const;

  const Topology& t_;
  std::vector<std::int64_t> rank_of_;  // per vertex: GPU rank, or -1
  std::vector<Vertex> core_;           // core vertices by core index
  std::vector<std::int32_t> core_index_;   // per vertex: core index, or kNone
  std::vector<std::int32_t> local_index_;  // per vertex of a node: its index in the node
  std::vector<std::vector<Vertex>> node_vertices_;
  std::vector<char> node_sealed_;
  // Per vertex of a sealed node that a route may cross: the one switch its piece of fabric
  // touches (kNoVertex: none) and its hops to that switch.
  std::vector<Vertex> exit_;
  std::vector<std::uint16_t> exit_hops_;
  // Core adjacency (core neighbours only), compressed rows by core index.
  std::vector<std::uint32_t> core_row_;
  std::vector<Vertex> core_adj_;
  std::unordered_map<std::uint64_t, Field> fields_;  // by (dst, in_node)
  std::unordered_map<Vertex, std::vector<std::uint16_t>> core_fields_;  // by switch (node-based: stable)
  // Node-based map: a route's storage never moves once computed, so spans stay valid.
  std::unordered_map<std::uint64_t, std::vector<ChannelId>> routes_;
  std::vector<Vertex> queue_;  // scratch of search()
};

}  // namespace exasim::topologies
