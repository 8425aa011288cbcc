#pragma once
// What the search optimizes: a name -> objective table with help text (`exasim plan --help`).
// Single objectives score a plan (lower is better); Pareto objectives keep the plans no other
// plan beats on both throughput and a second metric.
#include <string>
#include <vector>

namespace exasim::workloads::planner {

// The metrics objectives read, from an estimate or a simulation.
struct PlanMetrics {
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double usd_per_million_tokens = 0;
  double energy_per_token_j = 0;
  double memory_headroom_bytes = 0;
  double time_to_train_s = 0;  // expected, with failures (a reliability: section with tokens); else 0
};

struct ObjectiveInfo {
  std::string name;
  std::string help;
  double default_memory_margin = 0;  // fraction of GPU memory kept free unless plan_space says
  double (*score)(const PlanMetrics&) = nullptr;  // lower is better; for Pareto: the second axis
  bool pareto = false;                             // frontier of (throughput up, score down)
};

const std::vector<ObjectiveInfo>& objectives();
// Throws ConfigError listing the names when unknown; '-' may stand for '_' (time-to-train).
const ObjectiveInfo& find_objective(const std::string& name);
std::string objective_names();

// Indices of the plans on the frontier of (tokens_per_s: higher better, score: lower better):
// none of them is matched or beaten on both by another plan. In input order.
std::vector<std::size_t> pareto_frontier(const std::vector<PlanMetrics>& plans, double (*score)(const PlanMetrics&));

}  // namespace exasim::workloads::planner
