#pragma once
// The topology of a cluster as the network backends use it: the graph, its routes, and the
// bandwidth NCCL achieves on each directed channel (datasheet x the efficiency of the link's
// class: node fabric or network). Both backends read the same numbers, so they agree whenever
// nothing else shares the links.
#include <cstdint>
#include <span>
#include <vector>

#include "models/collective/collective_params.hpp"
#include "models/collective/group_layout.hpp"
#include "topologies/cluster.hpp"
#include "topologies/routing.hpp"
#include "topologies/topology.hpp"

namespace exasim::sim {

using topologies::ChannelId;
using topologies::Vertex;

class NetworkFabric {
 public:
  NetworkFabric(const topologies::Cluster& cluster, const models::CollectiveParams& params);
  NetworkFabric(const NetworkFabric&) = delete;
  NetworkFabric& operator=(const NetworkFabric&) = delete;

  const topologies::Cluster& cluster() const { return cluster_; }
  const models::CollectiveParams& params() const { return params_; }
  const topologies::Topology& topology() const { return topology_; }
  std::size_t channel_count() const { return capacity_.size(); }
  double capacity(ChannelId c) const { return capacity_[c]; }         // achieved B/s
  double latency(ChannelId c) const { return latency_[c]; }           // s
  std::span<const ChannelId> route(Vertex a, Vertex b) { return router_.route(a, b); }
  double route_latency(std::span<const ChannelId> r) const;

  // Where the members of a rank set sit; switch_reduction when the node fabric reduces in its
  // switch. Throws PlanError for a rank outside the cluster.
  models::GroupLayout layout(const std::vector<std::uint32_t>& ranks) const;
  Vertex gpu(std::uint32_t rank) const { return topology_.gpu(static_cast<int>(rank)); }
  Vertex node_switch(std::uint32_t rank) const { return topology_.node_switch(cluster_.node_of(static_cast<int>(rank))); }

 private:
  topologies::Cluster cluster_;
  models::CollectiveParams params_;
  topologies::Topology topology_;
  topologies::Router router_;
  std::vector<double> capacity_;
  std::vector<double> latency_;
};

}  // namespace exasim::sim
