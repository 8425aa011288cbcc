#pragma once
// The analytical network backend: each collective costed over the topology without contention,
// per round of its schedule: the step latency plus the round's bytes on its most loaded channel
// over that channel's achieved bandwidth, or, where the round's own flows share channels
// unevenly, the time their max-min sharing takes (sim/net/collective_plan.hpp). Results are cached per
// op object: the ops vector handed to the engine outlives a run and lowering shares one op
// between equal tasks.
#include <unordered_map>

#include "models/collective/collective_model.hpp"
#include "sim/net/collective_plan.hpp"
#include "sim/net/network_fabric.hpp"
#include "sim/network_backend.hpp"
#include "topologies/cluster.hpp"

namespace exasim::sim {

class AnalyticalNetwork final : public NetworkBackend {
 public:
  AnalyticalNetwork(const topologies::Cluster& cluster, const models::CollectiveParams& params,
                    NetworkOptions options = {});
  Time duration(const CommOp& op, Time now) override;
  void forget_ops() override { cache_.clear(); }
  // The full cost (algorithm, bandwidths) of an op, for reports and `exasim collective`.
  models::CollectiveCost cost(const CommOp& op);
  CollectivePlanner& planner() { return planner_; }
  NetworkFabric& fabric() { return fabric_; }

 private:
  NetworkFabric fabric_;
  CollectivePlanner planner_;
  std::unordered_map<const CommOp*, Time> cache_;
};

// Time, algorithm and nccl-tests bandwidths of `op` run as `choice` in `time_s`.
models::CollectiveCost cost_of(const PlanChoice& choice, const CommOp& op, double time_s);

}  // namespace exasim::sim
