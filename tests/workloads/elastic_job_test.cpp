// An elastic data-parallel job under failures (workloads/reliability/elastic_job.hpp): the Monte
// Carlo against its closed form (replicas out as an alternating renewal process), the blast radius
// (more, smaller replicas lose less), and which plans can be elastic at all.
#include <doctest/doctest.h>

#include <initializer_list>

#include "approx.hpp"
#include "workloads/reliability/elastic_job.hpp"
#include "workloads/reliability/goodput.hpp"
#include "workloads/reliability/job_reliability.hpp"

namespace rel = exasim::workloads::reliability;
using exasim::models::CheckpointedJob;
using exasim::testing::approx;

namespace {

rel::GoodputInputs elastic_inputs(const CheckpointedJob& job, double interval, const rel::ElasticJob& e, int trials = 100) {
  rel::GoodputInputs in;
  in.job = job;
  in.interval_s = interval;
  in.horizon_s = 30 * 86400.0;
  in.trials = trials;
  in.seed = 5;
  in.elastic = e;
  return in;
}

}  // namespace

TEST_CASE("elastic job: the Monte Carlo agrees with the closed form within 1 percent") {
  // An interruption every 3 h (Llama 3 at 16k GPUs) or every 30 min; repairs of 1-8 h;
  // 8-128 replicas; checkpoints of 10 s an hour.
  const CheckpointedJob job3h{3 * 3600.0, 10, 900}, job30m{1800, 10, 900};
  struct Case {
    CheckpointedJob job;
    rel::ElasticJob e;
  };
  for (const Case& c : {Case{job3h, {16, 4 * 3600.0, 120, 10}}, Case{job3h, {128, 8 * 3600.0, 60, 10}},
                        Case{job30m, {64, 3600, 60, 5}}, Case{job30m, {8, 3600, 30, 20}}}) {
    CAPTURE(c.e.replicas);
    CAPTURE(c.job.mtbf_s);
    CAPTURE(c.e.repair_s);
    const rel::GoodputEstimate g = rel::simulate_goodput(elastic_inputs(c.job, 3600, c.e));
    const double expected = rel::expected_elastic_goodput(c.job, 3600, c.e);
    CHECK(g.fraction == approx(expected).epsilon(0.01));
    // Failures come at the job's rate less the share of the replicas out: lambda (1 - p).
    const double x = c.e.repair_s / (c.job.mtbf_s * c.e.replicas);
    CHECK(g.interruptions_per_day == approx(86400 / c.job.mtbf_s / (1 + x)).epsilon(0.03));
    // Each replica out a share p of the time: the capacity it takes.
    const double p = x / (1 + x);
    CHECK(g.mean_split.degraded / g.mean_split.wall() == approx(p * (1 - 2 * c.e.reconfigure_s / c.job.mtbf_s / (1 + x))).epsilon(0.05));
  }
}

TEST_CASE("elastic job: a smaller blast radius loses less, and elastic beats stopping the job") {
  const CheckpointedJob job{3 * 3600.0, 10, 900};
  const double two = rel::simulate_goodput(elastic_inputs(job, 3600, {2, 4 * 3600.0, 120, 10})).fraction;
  const double sixteen = rel::simulate_goodput(elastic_inputs(job, 3600, {16, 4 * 3600.0, 120, 10})).fraction;
  const double many = rel::simulate_goodput(elastic_inputs(job, 3600, {128, 4 * 3600.0, 120, 10})).fraction;
  CHECK(two < sixteen);
  CHECK(sixteen < many);
  // Every failure stopping the job (restart 15 min, Daly's optimum): below 128 replicas going on.
  rel::GoodputInputs stop = elastic_inputs(job, exasim::models::optimal_interval(job), {});
  stop.elastic.reset();
  CHECK(rel::simulate_goodput(stop).fraction < many);
  // Until trained: the work is kept, at the closed form's pace.
  rel::GoodputInputs until = elastic_inputs(job, 3600, {16, 4 * 3600.0, 120, 10});
  until.work_s = 10 * 86400.0;
  const rel::GoodputEstimate trained = rel::simulate_goodput(until);
  CHECK(trained.mean_split.useful == approx(*until.work_s).epsilon(1e-9));
  CHECK(*trained.time_to_train_s == approx(*until.work_s / rel::expected_elastic_goodput(job, 3600, until.elastic.value())).epsilon(0.02));
}

TEST_CASE("elastic job: only replicas that hold whole model states can be dropped") {
  exasim::workloads::TrainingConfig plan;
  plan.parallelism.dp = 8;
  CHECK(rel::elastic_replicas(plan).replicas == 8);
  plan.zero = 1;
  CHECK(rel::elastic_replicas(plan).replicas == 0);
  CHECK(rel::elastic_replicas(plan).why_not == "ZeRO-1 shards the states over the replicas");
  plan.zero = 0;
  plan.parallelism.ep = 4;
  CHECK(rel::elastic_replicas(plan).replicas == 0);
  plan.parallelism.ep = 1;
  plan.parallelism.dp = 1;
  CHECK(rel::elastic_replicas(plan).replicas == 0);
}

TEST_CASE("elastic job: checkpoints balance only the rollbacks when every replica is out") {
  const CheckpointedJob job{3 * 3600.0, 10, 900};
  // 128 replicas out 1% of the time each: all of them out at once never happens; a day of work.
  CHECK(rel::elastic_optimal_interval(job, {128, 4 * 3600.0, 120, 10}) == 86400);
  // Two replicas, each out 40% of the time (x = 4 h / 6 h): a failure finds the other out at
  // p (1 - p) / M, and Daly's optimum at that rate, by hand.
  const double p = (4.0 / 6) / (1 + 4.0 / 6);
  const double rollback_mtbf = 3 * 3600.0 / (p * (1 - p));
  CHECK(rel::elastic_optimal_interval(job, {2, 4 * 3600.0, 120, 10}) ==
        approx(exasim::models::optimal_interval({rollback_mtbf, 10, 900})).epsilon(1e-9));
}
