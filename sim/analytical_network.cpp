#include "sim/analytical_network.hpp"

#include <algorithm>
#include <unordered_map>

namespace exasim::sim {

models::Collective to_collective(CommKind k) {
  switch (k) {
    case CommKind::kAllReduce: return models::Collective::kAllReduce;
    case CommKind::kReduceScatter: return models::Collective::kReduceScatter;
    case CommKind::kAllGather: return models::Collective::kAllGather;
    case CommKind::kAllToAll: return models::Collective::kAllToAll;
    case CommKind::kBroadcast: return models::Collective::kBroadcast;
    case CommKind::kSendRecv: return models::Collective::kSendRecv;
  }
  return models::Collective::kAllReduce;
}

AnalyticalNetwork::AnalyticalNetwork(const topologies::Cluster& cluster, const models::CollectiveParams& params,
                                     models::CollectiveAlgorithm algorithm)
    : cluster_(cluster), params_(params), algorithm_(algorithm) {}

models::GroupShape AnalyticalNetwork::shape_of(const std::vector<std::uint32_t>& ranks) const {
  std::unordered_map<int, int> per_node;
  int most = 0;
  for (auto r : ranks) most = std::max(most, ++per_node[cluster_.node_of(static_cast<int>(r))]);
  return {static_cast<int>(ranks.size()), std::max(1, most)};
}

models::GroupLinks AnalyticalNetwork::links() const {
  models::GroupLinks l;
  l.intra_bandwidth = cluster_.intra.bandwidth;
  l.intra_latency = cluster_.intra.latency;
  if (cluster_.inter) {
    // Symmetric plans keep every GPU of a node communicating at once, so each gets its share.
    l.inter_bandwidth = cluster_.nic_bandwidth_per_gpu(cluster_.gpus_per_node);
    l.inter_latency = cluster_.inter->nic.latency;
  }
  return l;
}

models::CollectiveCost AnalyticalNetwork::cost(const CommOp& op) const {
  const models::GroupShape g = shape_of(op.ranks);
  return models::collective_cost(to_collective(op.kind), op.bytes, g, links(), params_, algorithm_);
}

Time AnalyticalNetwork::duration(const CommOp& op, Time /*now*/) {
  if (auto it = cache_.find(&op); it != cache_.end()) return it->second;
  const Time t = cost(op).time_s;
  cache_.emplace(&op, t);
  return t;
}

}  // namespace exasim::sim
