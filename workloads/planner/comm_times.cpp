#include "workloads/planner/comm_times.hpp"

#include <algorithm>

#include "sim/net/collective_plan.hpp"

namespace exasim::workloads::planner {

CommTimes::CommTimes(const topologies::Cluster& cluster, const models::CollectiveParams& params)
    : cluster_(cluster), params_(params) {
  links_.intra_bandwidth = cluster.intra.bandwidth;
  links_.intra_latency = cluster.intra.latency;
  if (cluster.inter) {
    links_.inter_bandwidth = cluster.nic_bandwidth_per_gpu(cluster.gpus_per_node);
    // NIC to NIC through a leaf, a spine and a leaf: the NIC latency covers one switch.
    links_.inter_latency = cluster.inter->nic.latency + 2 * cluster.inter->nic.switch_latency;
  }
}

double CommTimes::data_parallel(sim::CommKind kind, int tp, int dp, double bytes) {
  if (dp <= 1 || bytes <= 0) return 0;
  const auto key = std::make_tuple(static_cast<int>(kind), tp, dp, bytes);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const int gpn = cluster_.gpus_per_node;
  models::GroupShape g;
  g.ranks = dp;
  g.ranks_per_node = std::max(1, std::min(dp, tp < gpn ? gpn / tp : 1));
  const double t = models::collective_cost(sim::to_collective(kind), bytes, g, links_, params_).time_s;
  cache_.emplace(key, t);
  return t;
}

double CommTimes::pipeline_send(int tp, int dp, double bytes) const {
  const bool same_node = tp * dp < cluster_.gpus_per_node || !cluster_.inter;
  if (same_node) return links_.intra_latency + params_.step_overhead_s + bytes / (links_.intra_bandwidth * params_.intra_efficiency);
  return links_.inter_latency + params_.inter_step_overhead_s + bytes / (links_.inter_bandwidth * params_.inter_efficiency);
}

}  // namespace exasim::workloads::planner
