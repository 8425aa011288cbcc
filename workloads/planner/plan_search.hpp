#pragma once
// Two-stage plan search. Stage 1 enumerates the plan space (plan_space.hpp), drops what cannot
// run (plan_constraints.hpp) and scores every runnable candidate with the closed-form estimate
// (plan_estimate.hpp). Stage 2 simulates the best K by estimate with the engine
// (plan_evaluation.hpp) and ranks them by the simulated objective; equal scores go to the plan
// with more free memory. Pareto objectives simulate the estimated frontier and report the
// simulated one. Stage 2 runs through a map function so that it can be spread over MPI ranks.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/planner/objectives.hpp"
#include "workloads/planner/plan_estimate.hpp"
#include "workloads/planner/planner_inputs.hpp"

namespace exasim::workloads::planner {

// Runs job(0..n-1) and returns the results in index order (serial, or over MPI ranks).
using ParallelMap = std::function<std::vector<std::string>(std::size_t n, const std::function<std::string(std::size_t)>& job)>;
std::vector<std::string> serial_map(std::size_t n, const std::function<std::string(std::size_t)>& job);

struct SearchOptions {
  std::string objective = "throughput";
  int top_k = 10;
  // Plans to simulate and rank as well (the scenario's own plan, a published plan).
  std::vector<Candidate> also_simulate;
  // Called as the search advances: phase "estimate" or "simulate", done of total.
  std::function<void(const char* phase, std::size_t done, std::size_t total)> progress;
  ParallelMap map = serial_map;
};

struct RankedPlan {
  Candidate candidate;
  Estimate estimate;
  std::size_t estimate_rank = 0;  // 1-based place in the stage-1 ranking (0: not runnable there)
  nlohmann::json report;          // simulated: evaluation_json(), same keys as `exasim run --json`
  PlanMetrics simulated;
  bool pareto = false;
  bool requested = false;         // from SearchOptions::also_simulate
};

struct SearchResult {
  std::string objective;
  double memory_margin = 0;
  std::size_t enumerated = 0;
  std::size_t runnable = 0;                     // passed the constraints
  std::size_t duplicates = 0;                   // runnable, but the same plan to the simulator as an earlier one
  std::map<std::string, std::size_t> rejected;  // by the key at fault
  std::size_t layer_cost_entries = 0;           // per-layer cost tables measured
  std::vector<RankedPlan> plans;                // simulated, best first
  std::vector<std::string> requested_rejections;  // also_simulate plans that cannot run, and why
};

// Throws ConfigError for an unknown objective; PlanError when no candidate can run.
SearchResult search_plans(const PlannerInputs& in, const SearchOptions& options);

// Objective metrics of a simulated plan's report.
PlanMetrics metrics_of(const nlohmann::json& report);
PlanMetrics metrics_of(const Estimate& e);

}  // namespace exasim::workloads::planner
