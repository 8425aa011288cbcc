#include "workloads/reliability/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "hw/error.hpp"
#include "hw/units.hpp"
#include "workloads/reliability/elastic_job.hpp"
#include "workloads/serving/sampling.hpp"

namespace exasim::workloads::reliability {

namespace {

using serving::exponential;
using serving::Rng;

// Restart after a failure at the trial's current time: a failure during a restart starts it
// again. Returns the next failure time, which lies after the restart (or past the horizon).
double restart(const GoodputInputs& in, Rng& rng, double& t, Trial& trial, double end) {
  const double m = in.job.mtbf_s, r = in.job.restart_s;
  for (;;) {
    const double next_failure = t + exponential(rng, m);
    const double restarted = t + r;
    if (next_failure >= restarted || next_failure >= end) {
      const double until = std::min(restarted, end);
      trial.split.restart += until - t;
      t = until;
      return next_failure;
    }
    trial.split.restart += next_failure - t;
    t = next_failure;
    ++trial.interruptions;
  }
}

// One life of the job: segments of work, each closed by a checkpoint, until the work is kept
// (work mode) or the horizon is reached. A checkpoint stalls the training for its blocking write;
// an asynchronous one is durable only `upload_s` later (training goes on meanwhile), and a failure
// before then rolls back to the one before. The last checkpoint of a work-mode run waits for its
// upload. At the horizon the work in progress counts as useful (the job goes on; a bias of at most
// one interval over the horizon).
Trial run_trial(const GoodputInputs& in, Rng& rng) {
  Trial trial;
  TimeSplit& s = trial.split;
  const double end = in.work_s ? INFINITY : in.horizon_s;
  const double tolerance = in.work_s ? 1e-12 * *in.work_s : 0;
  TimeSplit kept;  // the split at the last durable checkpoint
  std::optional<std::pair<double, TimeSplit>> pending;  // an upload in flight: when it is durable, what it keeps
  const auto commit_until = [&](double time) {
    if (pending && pending->first <= time) {
      kept = pending->second;
      pending.reset();
    }
  };
  double t = 0, next_failure = exponential(rng, in.job.mtbf_s);
  for (;;) {
    if (in.work_s && *in.work_s - kept.useful <= tolerance) break;
    if (t >= end) break;
    const double remaining = in.work_s ? *in.work_s - s.useful : INFINITY;
    const double work = std::min(in.interval_s, remaining);
    const bool last = in.work_s && work >= remaining - tolerance;
    const double stall = in.job.checkpoint_s + (last ? in.upload_s : 0);
    const double segment_end = t + work + stall;
    if (next_failure >= segment_end && segment_end <= end) {  // the segment and its checkpoint's write complete
      commit_until(segment_end);
      s.useful += work;
      s.checkpoint += stall;
      t = segment_end;
      if (in.upload_s == 0 || last) kept = s;
      else pending.emplace(t + in.upload_s, s);
      continue;
    }
    if (next_failure >= end) {  // the horizon falls inside the segment
      commit_until(end);
      s.useful += std::min(work, end - t);
      s.checkpoint += std::max(0.0, end - t - work);
      t = end;
      break;
    }
    // The failure throws away everything since the last durable checkpoint, and any upload.
    commit_until(next_failure);
    pending.reset();
    s.lost += (next_failure - t) + (s.useful - kept.useful) + (s.checkpoint - kept.checkpoint);
    s.useful = kept.useful;
    s.checkpoint = kept.checkpoint;
    t = next_failure;
    ++trial.interruptions;
    next_failure = restart(in, rng, t, trial, end);
  }
  return trial;
}

// Mean and 95% half-width (normal approximation) of `values`.
std::pair<double, double> mean_ci95(const std::vector<double>& values) {
  const double n = static_cast<double>(values.size());
  double sum = 0;
  for (double v : values) sum += v;
  const double mean = sum / n;
  double sq = 0;
  for (double v : values) sq += (v - mean) * (v - mean);
  return {mean, 1.96 * std::sqrt(sq / (n - 1) / n)};
}

}  // namespace

GoodputEstimate simulate_goodput(const GoodputInputs& in) {
  if (in.upload_s > in.interval_s)
    throw PlanError("an asynchronous checkpoint's upload (" + std::to_string(in.upload_s) + " s) outlasts the interval (" +
                        std::to_string(in.interval_s) + " s of work)",
                    {"", 0, "reliability.checkpoint.interval"}, "checkpoint at most once per upload");
  Rng rng(in.seed);
  std::vector<double> fractions, walls;
  TimeSplit total;
  double interruptions = 0;
  for (int i = 0; i < in.trials; ++i) {
    const Trial trial = in.elastic ? run_elastic_trial(in, rng) : run_trial(in, rng);
    const TimeSplit& s = trial.split;
    fractions.push_back(s.useful / s.wall());
    walls.push_back(s.wall());
    total.useful += s.useful;
    total.checkpoint += s.checkpoint;
    total.lost += s.lost;
    total.restart += s.restart;
    total.degraded += s.degraded;
    interruptions += static_cast<double>(trial.interruptions);
  }
  GoodputEstimate e;
  std::tie(e.fraction, e.fraction_ci95) = mean_ci95(fractions);
  e.interruptions_per_day = interruptions / (total.wall() / 86400.0);
  const double n = in.trials;
  e.mean_split = {total.useful / n, total.checkpoint / n, total.lost / n, total.restart / n, total.degraded / n};
  if (in.work_s) {
    const auto [mean, ci] = mean_ci95(walls);
    e.time_to_train_s = mean;
    e.time_to_train_ci95 = ci;
  }
  return e;
}

namespace {

models::CheckpointedJob checkpointed_job(const JobCosts& costs) {
  return {costs.job_mtbf_s, costs.checkpoint_write_s, costs.restart_s};
}

// Daly's goodput at the blocking write; an asynchronous checkpoint's upload window adds a chance
// u / M per segment of losing one more segment, so the expected time grows by e^(u/M).
double expected_fraction(const JobCosts& costs, double interval_s, const std::optional<ElasticJob>& elastic) {
  if (elastic) return expected_elastic_goodput(checkpointed_job(costs), interval_s, *elastic);
  return models::expected_goodput(checkpointed_job(costs), interval_s) * std::exp(-costs.checkpoint_upload_s / costs.job_mtbf_s);
}

// The elastic job a plan makes of the configuration, where it can drop replicas.
std::optional<ElasticJob> elastic_job(const ReliabilityConfig& config, const ElasticReplicas& replicas, double iteration_s) {
  if (!config.elastic || replicas.replicas < 2) return std::nullopt;
  return ElasticJob{replicas.replicas, config.elastic->repair_s, config.elastic->reconfigure_s, iteration_s};
}

double optimal_interval_for(const JobCosts& costs, const std::optional<ElasticJob>& elastic) {
  return elastic ? elastic_optimal_interval(checkpointed_job(costs), *elastic) : models::optimal_interval(checkpointed_job(costs));
}

// The failure-free time to train the token budget, in whole iterations.
double training_work(const ReliabilityConfig& config, double iteration_s, double tokens_per_iteration) {
  return std::ceil(*config.train_tokens / tokens_per_iteration) * iteration_s;
}

}  // namespace

double checkpoint_interval(const ReliabilityConfig& config, const JobCosts& costs, double iteration_s,
                           const std::optional<ElasticJob>& elastic) {
  // The upload window's cost does not depend on the interval (e^(u/M)): the optimum is Daly's at
  // the blocking write, but at least one upload long, so that one upload is in flight at a time.
  const double wanted = config.checkpoint_interval_s.value_or(optimal_interval_for(costs, elastic));
  const double iterations = std::max({1.0, std::round(wanted / iteration_s), std::ceil(costs.checkpoint_upload_s / iteration_s)});
  return iterations * iteration_s;
}

double expected_time_to_train(const ReliabilityConfig& config, const JobCosts& costs, const TrainingConfig& plan,
                              double iteration_s, double tokens_per_iteration) {
  const auto elastic = elastic_job(config, elastic_replicas(plan), iteration_s);
  const double interval = checkpoint_interval(config, costs, iteration_s, elastic);
  return training_work(config, iteration_s, tokens_per_iteration) / expected_fraction(costs, interval, elastic);
}

GoodputReport job_goodput(const ReliabilityConfig& config, const JobCosts& costs, const TrainingConfig& plan,
                          double iteration_s, double tokens_per_iteration, std::uint64_t scenario_seed) {
  using units::Dimension;
  GoodputReport r;
  r.config = config;
  r.costs = costs;
  r.iteration_s = iteration_s;
  const models::CheckpointedJob job = checkpointed_job(costs);
  if (config.elastic) r.elastic = elastic_replicas(plan);
  const std::optional<ElasticJob> elastic = elastic_job(config, r.elastic, iteration_s);
  r.optimal_checkpoint_interval_s = optimal_interval_for(costs, elastic);
  r.checkpoint_interval_s = checkpoint_interval(config, costs, iteration_s, elastic);
  r.expected_fraction = expected_fraction(costs, r.checkpoint_interval_s, elastic);
  const auto fmt = [](double v, Dimension d) { return units::format(v, d, 3); };
  if (!(r.expected_fraction >= 0.01)) {
    char percent[32];
    std::snprintf(percent, sizeof percent, "%.3g%%", 100 * r.expected_fraction);
    throw PlanError("the job makes almost no progress: expected goodput " + std::string(percent) + " with an interruption every " + fmt(job.mtbf_s, Dimension::kTime) + ", checkpoints of " +
                        fmt(job.checkpoint_s, Dimension::kTime) + " every " + fmt(r.checkpoint_interval_s, Dimension::kTime) +
                        " of work and restarts of " + fmt(job.restart_s, Dimension::kTime),
                    {"", 0, "reliability.job_mtbf"}, "a job this unreliable does not train; check the failure rates");
  }
  GoodputInputs in{job, r.checkpoint_interval_s, costs.checkpoint_upload_s, std::nullopt, config.horizon_s, config.trials,
                   config.seed.value_or(scenario_seed), elastic};
  if (config.train_tokens) in.work_s = training_work(config, iteration_s, tokens_per_iteration);
  // Events a trial takes: a segment per checkpoint, and per interruption a failure and a restart.
  const double wall = in.work_s ? *in.work_s / r.expected_fraction : in.horizon_s;
  const double events = config.trials * wall * (1 / (r.checkpoint_interval_s + job.checkpoint_s) + 2 / job.mtbf_s);
  if (events > 1e9) {
    throw PlanError("the Monte Carlo would take about " + std::to_string(static_cast<long long>(events)) +
                        " events (" + std::to_string(config.trials) + " trials over " + fmt(wall, Dimension::kTime) + ")",
                    {"", 0, config.train_tokens ? "reliability.tokens" : "reliability.horizon"},
                    "fewer trials, a shorter horizon or a longer checkpoint interval");
  }
  r.simulated = simulate_goodput(in);
  return r;
}

nlohmann::json goodput_json(const GoodputReport& r) {
  const GoodputEstimate& e = r.simulated;
  nlohmann::json j;
  j["fraction"] = e.fraction;
  j["fraction_ci95"] = {e.fraction - e.fraction_ci95, e.fraction + e.fraction_ci95};
  j["expected_fraction"] = r.expected_fraction;
  j["interruptions_per_day"] = e.interruptions_per_day;
  j["checkpoint_interval_s"] = r.checkpoint_interval_s;
  j["optimal_checkpoint_interval_s"] = r.optimal_checkpoint_interval_s;
  const JobCosts& c = r.costs;
  j["job_mtbf_s"] = c.job_mtbf_s;
  if (!c.interruptions_per_day.empty()) j["interruptions_per_day_by_component"] = c.interruptions_per_day;
  j["checkpoint_write_s"] = c.checkpoint_write_s;
  j["checkpoint_mode"] = c.checkpoint_upload_s > 0 ? "async" : "sync";
  if (r.config.elastic) {
    j["elastic"] = {{"replicas", r.elastic.replicas}, {"repair_s", r.config.elastic->repair_s},
                    {"reconfigure_s", r.config.elastic->reconfigure_s}};
    if (!r.elastic.why_not.empty()) j["elastic"]["not_applied"] = r.elastic.why_not;
  }
  if (c.checkpoint_upload_s > 0) j["checkpoint_upload_s"] = c.checkpoint_upload_s;
  j["checkpoint_write_bound"] = c.checkpoint_bound;
  if (c.checkpoint_bytes > 0) j["checkpoint_bytes"] = c.checkpoint_bytes;
  j["restart_s"] = c.restart_s;
  if (r.config.restart) {
    j["restart_parts_s"] = {{"detection", r.config.restart->detection_s}, {"reschedule", r.config.restart->reschedule_s},
                            {"startup", r.config.restart->startup_s}, {"checkpoint_load", c.checkpoint_load_s}};
  }
  j["trials"] = r.config.trials;
  if (e.time_to_train_s) {
    j["time_to_train_s"] = *e.time_to_train_s;
    j["time_to_train_ci95_s"] = {*e.time_to_train_s - *e.time_to_train_ci95, *e.time_to_train_s + *e.time_to_train_ci95};
  } else {
    j["horizon_s"] = r.config.horizon_s;
  }
  const TimeSplit& s = e.mean_split;
  j["time_breakdown_s"] = {{"useful", s.useful}, {"checkpoint", s.checkpoint}, {"lost_work", s.lost}, {"restart", s.restart}};
  if (r.config.elastic) j["time_breakdown_s"]["replicas_out"] = s.degraded;
  return j;
}

}  // namespace exasim::workloads::reliability
