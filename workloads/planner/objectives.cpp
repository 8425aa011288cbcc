#include "workloads/planner/objectives.hpp"

#include <algorithm>
#include <limits>

#include "hw/error.hpp"

namespace exasim::workloads::planner {

namespace {

double neg_throughput(const PlanMetrics& m) { return -m.tokens_per_s; }
double cost(const PlanMetrics& m) { return m.usd_per_million_tokens; }
double energy(const PlanMetrics& m) { return m.energy_per_token_j; }
double iteration(const PlanMetrics& m) { return m.iteration_time_s; }
double time_to_train(const PlanMetrics& m) { return m.time_to_train_s; }

}  // namespace

const std::vector<ObjectiveInfo>& objectives() {
  // iteration_time keeps 10% of memory free by default: PyTorch's caching allocator and
  // fragmentation commonly reserve 5-10% beyond what tensors occupy (stated estimate).
  static const std::vector<ObjectiveInfo> table = {
      {"throughput", "most tokens per second (plans must fit in memory)", 0.0, neg_throughput, false},
      {"cost_per_token", "lowest $ per million tokens (hardware or rent + energy at PUE)", 0.0, cost, false},
      {"energy_per_token", "lowest IT energy per token (J)", 0.0, energy, false},
      {"iteration_time", "shortest iteration with 10% of GPU memory kept free (plan_space.memory_margin)", 0.10, iteration, false},
      {"time_to_train", "shortest expected time to train reliability.tokens with failures, checkpoints and restarts",
       0.0, time_to_train, false},
      {"pareto_cost", "Pareto frontier of throughput vs $ per million tokens", 0.0, cost, true},
      {"pareto_energy", "Pareto frontier of throughput vs energy per token", 0.0, energy, true},
  };
  return table;
}

std::string objective_names() {
  std::string s;
  for (const auto& o : objectives()) s += (s.empty() ? "" : ", ") + o.name;
  return s;
}

const ObjectiveInfo& find_objective(const std::string& written) {
  std::string name = written;
  std::replace(name.begin(), name.end(), '-', '_');  // DESIGN.md writes time-to-train
  for (const auto& o : objectives())
    if (o.name == name) return o;
  throw ConfigError("unknown objective \"" + written + "\"", {"<command line>", 0, "--objective"}, "use one of " + objective_names());
}

std::vector<std::size_t> pareto_frontier(const std::vector<PlanMetrics>& plans, double (*score)(const PlanMetrics&)) {
  // Sweep by throughput, best first: a plan is on the frontier when it beats the lowest score
  // of every plan at least as fast and listed before it (equal plans: the first stays).
  std::vector<std::size_t> order(plans.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (plans[a].tokens_per_s != plans[b].tokens_per_s) return plans[a].tokens_per_s > plans[b].tokens_per_s;
    if (score(plans[a]) != score(plans[b])) return score(plans[a]) < score(plans[b]);
    return a < b;
  });
  std::vector<std::size_t> out;
  double best = std::numeric_limits<double>::infinity();
  for (const std::size_t i : order) {
    if (score(plans[i]) < best) out.push_back(i);
    best = std::min(best, score(plans[i]));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace exasim::workloads::planner
