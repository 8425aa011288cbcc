#pragma once
// Times of the data-parallel and pipeline communications of a candidate from the closed-form
// alpha-beta collective model (models/collective/collective_model.hpp: per algorithm step a
// latency plus bytes over the bottleneck bandwidth, the fastest of ring, hierarchical and tree),
// on the group's shape in the cluster: ranks per node and nodes, the node fabric's bandwidth and
// each GPU's share of its node's NICs when every GPU of a node communicates at once (symmetric
// plans do). No topology is built, so a 16k-GPU cluster costs what an 8-GPU one does.
#include <map>
#include <tuple>

#include "models/collective/collective_model.hpp"
#include "models/collective/collective_params.hpp"
#include "sim/network_backend.hpp"
#include "topologies/cluster.hpp"

namespace exasim::workloads::planner {

class CommTimes {
 public:
  CommTimes(const topologies::Cluster& cluster, const models::CollectiveParams& params);
  // A collective over the data-parallel group of a tp x pp x dp plan: dp ranks tp apart
  // (Megatron's order: TP fastest, then DP, then PP).
  double data_parallel(sim::CommKind kind, int tp, int dp, double bytes);
  // One activation (or gradient) send between neighbouring pipeline stages, tp x dp ranks apart.
  double pipeline_send(int tp, int dp, double bytes) const;

 private:
  const topologies::Cluster& cluster_;
  models::CollectiveParams params_;
  models::GroupLinks links_;
  std::map<std::tuple<int, int, int, double>, double> cache_;  // (kind, tp, dp, bytes)
};

}  // namespace exasim::workloads::planner
