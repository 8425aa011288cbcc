#include "workloads/reliability/elastic_job.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace exasim::workloads::reliability {

namespace {

// What one wall-clock span does: paused, waiting with every replica out, or working on what is in.
void accrue(TimeSplit& s, double dt, bool paused, int out, const ElasticJob& e, double working_share) {
  if (paused) {
    s.restart += dt;
    return;
  }
  const double in = static_cast<double>(e.replicas - out) / e.replicas;
  s.useful += dt * in * working_share;
  s.checkpoint += dt * in * (1 - working_share);
  s.degraded += dt * (1 - in);
}

// Work that a failure throws away: moved from useful to lost (never more than there is).
void lose(TimeSplit& s, double work) {
  const double w = std::min(work, s.useful);
  s.useful -= w;
  s.lost += w;
}

}  // namespace

Trial run_elastic_trial(const GoodputInputs& in, serving::Rng& rng) {
  const ElasticJob& e = *in.elastic;
  const double working_share = in.interval_s / (in.interval_s + in.job.checkpoint_s);
  const double end = in.work_s ? INFINITY : in.horizon_s;
  Trial trial;
  TimeSplit& s = trial.split;
  int out = 0;
  std::vector<double> repairs;  // when each replica out is back, soonest last
  double t = 0, pause_end = 0;
  // Each replica in fails at M R; the next failure among `in` of them is exponential at their sum
  // (drawn again whenever that count changes: the process is memoryless).
  const auto next_failure_from = [&](double now) {
    return out == e.replicas ? INFINITY : now + serving::exponential(rng, in.job.mtbf_s * e.replicas / (e.replicas - out));
  };
  double next_failure = next_failure_from(0);
  for (;;) {
    if (in.work_s && s.useful >= *in.work_s) break;
    if (t >= end) break;
    const double next_repair = repairs.empty() ? INFINITY : repairs.back();
    const bool paused = t < pause_end;
    const bool working = !paused && out < e.replicas;
    double until = std::min({next_failure, next_repair, end});
    if (paused) until = std::min(until, pause_end);
    // The work left, at the speed of the replicas in (a run until trained ends there).
    double finish = INFINITY;
    if (working && in.work_s) finish = t + (*in.work_s - s.useful) / (working_share * (e.replicas - out) / e.replicas);
    until = std::min(until, finish);
    accrue(s, until - t, paused, out, e, working_share);
    t = until;
    if (t == finish) break;  // trained: until was chosen so that the work is done
    if (t >= end) continue;
    if (t == next_failure) {
      ++trial.interruptions;
      ++out;
      repairs.push_back(t + e.repair_s);
      std::sort(repairs.begin(), repairs.end(), std::greater<>());
      if (out == e.replicas) {
        lose(s, in.interval_s / 2);  // the state is gone: back to the last checkpoint
      } else {
        lose(s, e.iteration_s / 2);
        pause_end = std::max(pause_end, t + e.reconfigure_s);
      }
      next_failure = next_failure_from(t);
    } else if (t == next_repair) {
      repairs.pop_back();
      const bool restarting = out == e.replicas;  // the first replica back reloads the checkpoint
      --out;
      pause_end = std::max(pause_end, t + (restarting ? in.job.restart_s : e.reconfigure_s));
      next_failure = next_failure_from(t);
    }
  }
  return trial;
}

namespace {

// p: the share of time a replica is out (in for M R on average, out for D).
double out_probability(const models::CheckpointedJob& job, const ElasticJob& e) {
  const double x = e.repair_s / (job.mtbf_s * e.replicas);
  return x / (1 + x);
}

}  // namespace

double elastic_optimal_interval(const models::CheckpointedJob& job, const ElasticJob& e) {
  constexpr double kDay = 86400;
  const double p = out_probability(job, e);
  const double rollbacks = std::pow(p, e.replicas - 1) * (1 - p) / job.mtbf_s;  // a second
  if (!(rollbacks * kDay > 1e-9)) return kDay;
  return std::min(kDay, models::optimal_interval({1 / rollbacks, job.checkpoint_s, job.restart_s}));
}

double expected_elastic_goodput(const models::CheckpointedJob& job, double interval_s, const ElasticJob& e) {
  const double p = out_probability(job, e);
  const double failures = (1 - p) / job.mtbf_s;  // a second
  const double working_share = interval_s / (interval_s + job.checkpoint_s);
  return working_share * (1 - p) * (1 - 2 * e.reconfigure_s * failures) - failures * e.iteration_s / 2;
}

}  // namespace exasim::workloads::reliability
