#pragma once
// Routes between topology vertices: shortest paths by hop count that never pass through a GPU
// (and, between two parts of one node, stay inside the node's fabric, never looping through a
// NIC), with equal-cost choices spread by destination the way InfiniBand's fat-tree routing fills its
// forwarding tables (D-mod-k: at the i-th multi-way hop take choice (key / k1...k(i-1)) mod ki,
// key = the destination's rank). Deterministic: the same pair always gets the same route.
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

 private:
  const std::vector<std::uint16_t>& distances_to(Vertex dst, bool in_node);
  std::uint64_t key_of(Vertex v) const;

  const Topology& t_;
  std::vector<std::int64_t> rank_of_;  // per vertex: GPU rank, or -1
  std::unordered_map<std::uint64_t, std::vector<std::uint16_t>> dist_;  // by (dst, in_node)
  // Node-based map: a route's storage never moves once computed, so spans stay valid.
  std::unordered_map<std::uint64_t, std::vector<ChannelId>> routes_;
};

}  // namespace exasim::topologies
