#pragma once
// Goodput of a training job that is interrupted, checkpoints and restarts: the job's life over days
// simulated event by event (Monte Carlo over seeded trials), beside the closed form it must agree
// with (models/reliability/checkpoint_interval.hpp). The clean iteration comes from one engine
// run; this layer only schedules its work between failures.
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "models/reliability/checkpoint_interval.hpp"
#include "workloads/reliability/job_life.hpp"
#include "workloads/reliability/job_reliability.hpp"
#include "workloads/reliability/reliability_config.hpp"

namespace exasim::workloads::reliability {

struct GoodputEstimate {
  double fraction = 0;        // mean over trials of useful / wall
  double fraction_ci95 = 0;   // half-width of the 95% confidence interval of that mean
  double interruptions_per_day = 0;
  TimeSplit mean_split;       // per trial
  std::optional<double> time_to_train_s, time_to_train_ci95;  // work mode: mean wall time
};

GoodputEstimate simulate_goodput(const GoodputInputs& in);

// A scenario's goodput: the interval (optimal, or the one given) rounded to whole iterations,
// the Monte Carlo, and the closed form beside it.
struct GoodputReport {
  ReliabilityConfig config;
  JobCosts costs;
  double iteration_s = 0;
  double checkpoint_interval_s = 0;          // used: whole iterations
  double optimal_checkpoint_interval_s = 0;  // of the closed form (an elastic job's own)
  double expected_fraction = 0;              // closed form at the interval used
  ElasticReplicas elastic;                   // replicas an elastic job drops one by one (0: every failure stops it)
  GoodputEstimate simulated;
};

// The checkpoint interval a job uses: the one given or the closed form's optimum, rounded to whole
// iterations (at least one): checkpoints are taken between iterations (Megatron's --save-interval).
// With an elastic job, its own optimum (elastic_job.hpp).
double checkpoint_interval(const ReliabilityConfig& config, const JobCosts& costs, double iteration_s,
                           const std::optional<ElasticJob>& elastic = std::nullopt);

// The expected wall-clock time to train config.train_tokens (whole iterations of
// tokens_per_iteration) under failures: the failure-free time over the closed form's goodput, which
// the Monte Carlo's mean converges to. What the planner ranks plans by (time_to_train).
// `plan`: the parallel plan, which says whether an elastic job can drop replicas (elastic_replicas).
double expected_time_to_train(const ReliabilityConfig& config, const JobCosts& costs, const TrainingConfig& plan,
                              double iteration_s, double tokens_per_iteration);

// Throws PlanError (key reliability.*) when the job would make almost no progress (expected
// goodput under 1%) or the Monte Carlo would take more than ~10^9 events.
GoodputReport job_goodput(const ReliabilityConfig& config, const JobCosts& costs, const TrainingConfig& plan,
                          double iteration_s, double tokens_per_iteration, std::uint64_t scenario_seed);

nlohmann::json goodput_json(const GoodputReport& r);

}  // namespace exasim::workloads::reliability
