#pragma once
// The second stage of the search, and what `exasim sweep` runs per point: one plan simulated by
// the engine (simulate_training), its power taken from the timeline (timeline_power.hpp; under a
// power cap the iteration is simulated again with capped clocks, power_cap.hpp), cluster power
// with switches and PUE (models/power/cluster_power.hpp) and cost (models/cost). The JSON is
// `exasim run`'s with the power, energy and cost objects extended, and `goodput` where the scenario
// has a reliability: section (its Monte Carlo at the simulated iteration).
#include <nlohmann/json.hpp>

#include "models/cost/cost_model.hpp"
#include "models/power/cluster_power.hpp"
#include "workloads/planner/planner_inputs.hpp"
#include "workloads/reliability/goodput.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/training_simulation.hpp"

namespace exasim::workloads::planner {

struct PowerDetail {
  double gpu_cap_w = 0;       // 0: uncapped
  double mean_clock = 1;      // relative SM clock, time-weighted over kernels
  double peak_gpu_w = 0;      // highest instantaneous power of any simulated GPU
  models::UnitActivity activity;  // averaged over GPUs and the iteration
  models::GpuPowerSplit split;
  models::ClusterPower cluster;
};

struct PlanEvaluation {
  TrainingResult result;  // power, energy and cost fields from the models here
  PowerDetail power;
  std::optional<reliability::GoodputReport> goodput;  // the scenario's reliability: section, at this plan's speed
};

// Simulates `plan`; gpu_cap_w < 0 takes the scenario's cap (power.gpu_cap), 0 runs uncapped.
// Throws PlanError when it does not fit, ConfigError for a cap below the DVFS floor.
PlanEvaluation evaluate_plan(const PlannerInputs& in, const TrainingPlan& plan, double gpu_cap_w = -1);

nlohmann::json evaluation_json(const Scenario& s, const TrainingPlan& plan, const PlanEvaluation& e);

}  // namespace exasim::workloads::planner
