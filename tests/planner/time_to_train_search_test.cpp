// The planner's time_to_train objective: every plan's expected time to train under failures, from
// the same closed form the Monte Carlo converges to, and a ranking the simulated job agrees with.
#include <doctest/doctest.h>

#include <algorithm>

#include "approx.hpp"
#include "hw/error.hpp"
#include "located_error.hpp"
#include "planner_fixture.hpp"
#include "workloads/planner/plan_search.hpp"
#include "workloads/reliability/goodput.hpp"

using namespace exasim;
using namespace exasim::workloads::planner;
namespace rel = exasim::workloads::reliability;

namespace {

// Failures as often as on a 16k-GPU job (every 20 min on these 16 GPUs), so that a plan's
// checkpoint schedule matters; 5e9 tokens: 5-6 hours of work.
const std::string kReliability =
    "reliability: {job_mtbf: 20 min, checkpoint: {interval: optimal, write_time: 20 s}, restart_time: 3 min, tokens: 5e9, trials: 40}\n";

}  // namespace

TEST_CASE("time-to-train search: expected times, ranked, and as the simulated job orders them") {
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(testing::small_gpt_yaml(kReliability)));
  REQUIRE(in.reliability);
  SearchOptions o;
  o.objective = "time-to-train";  // DESIGN.md's spelling
  o.top_k = 6;
  // A plan far slower than the best: TP over all 8 GPUs of a node, no data parallelism, every layer
  // recomputed.
  Candidate slow = candidate_of(in.base);
  slow.tp = 8;
  slow.pp = 2;
  slow.dp = 1;
  slow.recompute = models::Recompute::kFull;
  o.also_simulate = {slow};
  const SearchResult r = search_plans(in, o);
  REQUIRE(r.plans.size() >= 3);
  CHECK(r.objective == "time_to_train");
  const rel::ReliabilityConfig& config = *in.scenario.reliability;
  for (std::size_t i = 0; i < r.plans.size(); ++i) {
    const PlanMetrics& m = r.plans[i].simulated;
    CAPTURE(i);
    // Whole iterations of 64 x 2048 tokens, over the closed form's goodput at the plan's interval.
    const double work = std::ceil(5e9 / (64 * 2048.0)) * m.iteration_time_s;
    const double interval = rel::checkpoint_interval(config, *in.reliability, m.iteration_time_s);
    const double goodput = models::expected_goodput({20 * 60.0, 20, 180}, interval);
    CHECK(m.time_to_train_s == testing::approx(work / goodput).epsilon(1e-9));
    CHECK(goodput < 0.9);  // failures cost something here
    if (i > 0) CHECK(m.time_to_train_s >= r.plans[i - 1].simulated.time_to_train_s);
  }
  // The Monte Carlo of the fastest and the slowest plan: each within 2% of the expectation, and in
  // the planner's order.
  const auto simulate = [&](const PlanMetrics& m) {
    return rel::job_goodput(config, *in.reliability, in.base, m.iteration_time_s, 64 * 2048.0, 3).simulated;
  };
  const PlanMetrics& best = r.plans.front().simulated;
  const auto slowest = std::find_if(r.plans.begin(), r.plans.end(), [](const RankedPlan& p) { return p.requested; });
  REQUIRE(slowest != r.plans.end());
  const PlanMetrics& worst = slowest->simulated;
  CHECK(worst.time_to_train_s > 1.2 * best.time_to_train_s);
  const rel::GoodputEstimate a = simulate(best), b = simulate(worst);
  CHECK(*a.time_to_train_s == testing::approx(best.time_to_train_s).epsilon(0.02));
  CHECK(*b.time_to_train_s == testing::approx(worst.time_to_train_s).epsilon(0.02));
  CHECK(*a.time_to_train_s < *b.time_to_train_s);
}

TEST_CASE("time-to-train search: without a token budget the objective is refused, naming the key") {
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(testing::small_gpt_yaml()));
  SearchOptions o;
  o.objective = "time_to_train";
  const auto e = testing::located_error([&] { (void)search_plans(in, o); });
  CHECK(e.second.starts_with("reliability.tokens: the time_to_train objective needs the token budget"));
  // The other objectives leave the time to train at 0 (none asked for).
  o.objective = "throughput";
  o.top_k = 2;
  CHECK(search_plans(in, o).plans.front().simulated.time_to_train_s == 0);
}

TEST_CASE("time-to-train search: with elastic replicas the best plan to train is not the fastest iteration") {
  // Failures every 20 minutes on 16 GPUs; an elastic job drops the replica that failed for 30
  // minutes. Only plans whose replicas hold whole model states (ZeRO-0) can go on without it.
  const std::string reliability =
      "reliability: {job_mtbf: 20 min, checkpoint: {interval: optimal, write_time: 20 s}, restart_time: 3 min, tokens: 5e10,"
      " trials: 40, elastic: {repair_time: 30 min, reconfigure_time: 1 min}}\n";
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(testing::small_gpt_yaml(reliability)));
  SearchOptions o;
  o.top_k = 3;
  const SearchResult fastest = search_plans(in, o);
  o.objective = "time_to_train";
  const SearchResult trained = search_plans(in, o);
  const RankedPlan& f = fastest.plans.front();
  const RankedPlan& t = trained.plans.front();
  CHECK(f.candidate.zero > 0);  // sharded states: every failure stops the job
  CHECK(t.candidate.zero == 0);
  CHECK(t.simulated.iteration_time_s > f.simulated.iteration_time_s);
  CHECK(t.simulated.time_to_train_s < f.simulated.time_to_train_s);
  // The simulated jobs agree: each within 2% of its expectation, and in that order. (A budget of
  // two days: a job of a few hours would finish faster than the stationary form says, by the
  // rejoin pauses not yet due in its first repair time and those still pending at its end.)
  const auto simulate = [&](const RankedPlan& p) {
    const auto r = rel::job_goodput(*in.scenario.reliability, *in.reliability, candidate_config(in.base, p.candidate),
                                    p.simulated.iteration_time_s, 64 * 2048.0, 3);
    return *r.simulated.time_to_train_s;
  };
  const double sim_t = simulate(t), sim_f = simulate(f);
  CHECK(sim_t == testing::approx(t.simulated.time_to_train_s).epsilon(0.02));
  CHECK(sim_f == testing::approx(f.simulated.time_to_train_s).epsilon(0.02));
  CHECK(sim_t < sim_f);
}
