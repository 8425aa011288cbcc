#include "sim/net/analytical_network.hpp"

namespace exasim::sim {

models::CollectiveCost cost_of(const PlanChoice& choice, const CommOp& op, double time_s) {
  models::CollectiveCost c;
  c.time_s = time_s;
  c.algorithm = choice.plan->algorithm;
  if (time_s > 0) {
    c.algorithm_bandwidth = op.bytes / time_s;
    c.bus_bandwidth = c.algorithm_bandwidth * models::bus_factor(to_collective(op.kind), static_cast<int>(op.ranks.size()));
  }
  return c;
}

AnalyticalNetwork::AnalyticalNetwork(const topologies::Cluster& cluster, const models::CollectiveParams& params,
                                     NetworkOptions options)
    : fabric_(cluster, params), planner_(fabric_, std::move(options)) {}

models::CollectiveCost AnalyticalNetwork::cost(const CommOp& op) {
  const PlanChoice c = planner_.choose(op);
  return cost_of(c, op, c.time_s);
}

Time AnalyticalNetwork::duration(const CommOp& op, Time /*now*/) {
  if (auto it = cache_.find(&op); it != cache_.end()) return it->second;
  const Time t = planner_.choose(op).time_s;
  cache_.emplace(&op, t);
  return t;
}

}  // namespace exasim::sim
