// The job's life under failures, simulated (workloads/reliability/goodput.hpp), against Daly's
// closed form, which is exact for the job it simulates; the optimum, the time split, the rate of
// interruptions and determinism.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

#include "approx.hpp"
#include "workloads/reliability/goodput.hpp"

namespace rel = exasim::workloads::reliability;
using exasim::models::CheckpointedJob;
using exasim::testing::approx;

namespace {

rel::GoodputInputs inputs(CheckpointedJob job, double interval, int trials, std::uint64_t seed = 7) {
  rel::GoodputInputs in;
  in.job = job;
  in.interval_s = interval;
  in.horizon_s = 30 * 86400.0;
  in.trials = trials;
  in.seed = seed;
  return in;
}

}  // namespace

TEST_CASE("goodput: the Monte Carlo agrees with Daly's closed form within 2 percent") {
  // Rates from Llama 3's (an interruption every ~3 h) to a failure every half hour; checkpoints of
  // seconds to minutes; restarts of none to half an hour; intervals at, below and above the optimum.
  struct Case {
    CheckpointedJob job;
    double interval_over_optimal;
  };
  for (const Case& c : {Case{{3 * 3600.0, 20, 900}, 1}, Case{{3 * 3600.0, 120, 0}, 0.5}, Case{{1800, 30, 600}, 2},
                        Case{{24 * 3600.0, 300, 1800}, 1}, Case{{1800, 5, 60}, 1}}) {
    CAPTURE(c.job.mtbf_s);
    CAPTURE(c.job.checkpoint_s);
    CAPTURE(c.job.restart_s);
    const double interval = c.interval_over_optimal * exasim::models::optimal_interval(c.job);
    const double expected = exasim::models::expected_goodput(c.job, interval);
    // Over a horizon: the fraction of wall time kept.
    const rel::GoodputEstimate by_horizon = rel::simulate_goodput(inputs(c.job, interval, 200));
    CHECK(by_horizon.fraction == approx(expected).epsilon(0.02));
    CHECK(by_horizon.fraction_ci95 < 0.01);
    // Until a given amount of work is kept: Daly's expected wall time for it.
    rel::GoodputInputs in = inputs(c.job, interval, 200);
    in.work_s = 100 * interval;
    const rel::GoodputEstimate by_work = rel::simulate_goodput(in);
    CHECK(*by_work.time_to_train_s == approx(*in.work_s / expected).epsilon(0.02));
    CHECK(by_work.mean_split.useful == approx(*in.work_s).epsilon(1e-9));
    // Failures arrive at 1 / MTBF of wall time wherever they strike.
    CHECK(by_horizon.interruptions_per_day == approx(86400 / c.job.mtbf_s).epsilon(0.02));
  }
}

TEST_CASE("goodput: the simulated job does best at the closed form's optimum") {
  const CheckpointedJob job{3 * 3600.0, 60, 900};
  const double best = exasim::models::optimal_interval(job);
  // Same seed for all three: the failures are the same, only the schedule moves.
  const double at_best = rel::simulate_goodput(inputs(job, best, 200)).fraction;
  CHECK(at_best > rel::simulate_goodput(inputs(job, best / 2, 200)).fraction);
  CHECK(at_best > rel::simulate_goodput(inputs(job, best * 2, 200)).fraction);
}

TEST_CASE("goodput: where the time went, without failures and with") {
  // Failures so rare that none comes in 30 days: work and checkpoints only, in their ratio.
  const rel::GoodputEstimate none = rel::simulate_goodput(inputs({1e15, 60, 900}, 1800, 4));
  CHECK(none.interruptions_per_day == 0);
  CHECK(none.fraction == approx(1800.0 / 1860).epsilon(1e-4));  // the horizon cuts the last segment
  CHECK(none.mean_split.lost == 0);
  CHECK(none.mean_split.restart == 0);
  // With failures: the four parts add up to the horizon in every trial, so on average too.
  const rel::GoodputEstimate some = rel::simulate_goodput(inputs({3600, 60, 900}, 1200, 50));
  CHECK(some.mean_split.wall() == approx(30 * 86400.0).epsilon(1e-12));
  CHECK(some.mean_split.lost > 0);
  CHECK(some.mean_split.restart > 0);
  // Each interruption costs a restart (R = 900 s, longer when the restart itself is interrupted).
  CHECK(some.mean_split.restart / (some.interruptions_per_day * 30) > 0.7 * 900);
}

TEST_CASE("goodput: same seed, same numbers, bit for bit") {
  const CheckpointedJob job{3 * 3600.0, 60, 900};
  const rel::GoodputEstimate a = rel::simulate_goodput(inputs(job, 1500, 20, 11));
  const rel::GoodputEstimate b = rel::simulate_goodput(inputs(job, 1500, 20, 11));
  const rel::GoodputEstimate c = rel::simulate_goodput(inputs(job, 1500, 20, 12));
  CHECK(a.fraction == b.fraction);
  CHECK(a.mean_split.lost == b.mean_split.lost);
  CHECK(a.interruptions_per_day == b.interruptions_per_day);
  CHECK(a.fraction != c.fraction);
}

TEST_CASE("goodput: a scenario's interval is whole iterations, and a hopeless job is refused") {
  rel::ReliabilityConfig cfg;
  cfg.trials = 20;
  rel::JobCosts costs;
  costs.job_mtbf_s = 3 * 3600.0;
  costs.checkpoint_write_s = 60;
  costs.restart_s = 900;
  const double iteration = 7.3;
  const rel::GoodputReport r = rel::job_goodput(cfg, costs, {}, iteration, 1e6, 1);
  const double iterations = r.checkpoint_interval_s / iteration;
  CHECK(iterations == std::round(iterations));
  CHECK(std::abs(r.checkpoint_interval_s - r.optimal_checkpoint_interval_s) <= iteration / 2);
  // A token budget: the work is whole iterations of 1e6 tokens, and it is all kept.
  cfg.train_tokens = 1e6 * 10000 - 1;
  const rel::GoodputReport trained = rel::job_goodput(cfg, costs, {}, iteration, 1e6, 1);
  CHECK(trained.simulated.mean_split.useful == approx(10000 * iteration).epsilon(1e-9));
  CHECK(*trained.simulated.time_to_train_s > 10000 * iteration);
  // A checkpoint longer than the time between failures: refused with the numbers.
  costs.checkpoint_write_s = 8 * 3600.0;
  costs.restart_s = 3 * 3600.0;
  cfg.checkpoint_interval_s = 10 * 3600.0;
  CHECK_THROWS_AS(rel::job_goodput(cfg, costs, {}, iteration, 1e6, 1), exasim::PlanError);
}

TEST_CASE("goodput: an asynchronous checkpoint hides its upload, and a failure during the upload loses one more segment") {
  const CheckpointedJob job{6 * 3600.0, 10, 600};
  const double interval = 1800;
  // No upload: the synchronous job, failure for failure.
  rel::GoodputInputs none = inputs(job, interval, 100);
  none.upload_s = 0;
  CHECK(rel::simulate_goodput(none).fraction == rel::simulate_goodput(inputs(job, interval, 100)).fraction);
  // A 10-minute upload: better than writing it all synchronously, worse than a free upload
  // (the same failures in all three).
  rel::GoodputInputs async = inputs(job, interval, 200);
  async.upload_s = 600;
  const double with_upload = rel::simulate_goodput(async).fraction;
  CHECK(with_upload < rel::simulate_goodput(inputs(job, interval, 200)).fraction);
  CHECK(with_upload > rel::simulate_goodput(inputs({job.mtbf_s, job.checkpoint_s + 600, job.restart_s}, interval, 200)).fraction);
  // By hand: a failure within the upload window (probability u / M a segment) loses one segment
  // more, so the expected time grows by e^(u/M) over Daly's at the blocking write.
  const double expected = exasim::models::expected_goodput(job, interval) * std::exp(-600 / job.mtbf_s);
  CHECK(with_upload == approx(expected).epsilon(0.01));
  // Until the work is kept: the last checkpoint waits for its upload.
  async.work_s = 40 * interval;
  const rel::GoodputEstimate trained = rel::simulate_goodput(async);
  CHECK(trained.mean_split.useful == approx(40 * interval).epsilon(1e-9));
  CHECK(*trained.time_to_train_s == approx(*async.work_s / expected).epsilon(0.02));
  // An upload longer than the interval would have two in flight: refused.
  async.upload_s = 2 * interval;
  CHECK_THROWS_AS(rel::simulate_goodput(async), exasim::PlanError);
}
