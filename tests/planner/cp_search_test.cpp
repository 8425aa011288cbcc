// Plan search over context parallelism: cp is enumerated where the sequence splits into 2 cp
// chunks, the closed-form memory equals the training layer's memory model (ZeRO shards over
// dp x cp, activations and logits of seq / cp tokens), and the estimate ranks CP plans as the
// engine does.
#include <doctest/doctest.h>

#include <optional>
#include <set>

#include "plan_checks.hpp"
#include "planner_fixture.hpp"
#include "workloads/planner/plan_constraints.hpp"
#include "workloads/planner/plan_estimate.hpp"
#include "workloads/planner/plan_space.hpp"
#include "workloads/planner/rank_correlation.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;
using namespace exasim::workloads::planner;

namespace {

// A 1.3B-class GPT with 16k-token sequences on two DGX A100 nodes.
std::string long_context_yaml(const std::string& extra = "") {
  return R"(
name: long-gpt
cluster: {gpu: A100-SXM4-80GB, gpus_per_node: 8, nodes: 2, intra_node: nvswitch-a100,
          inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 8}}
model: {layers: 16, hidden: 2048, heads: 16, kv_heads: 16, ffn: 8192, vocab: 51200, position: rope}
training: {seq_len: 16384, global_batch: 16, micro_batch: 1, precision: bf16, attention_kernel: flash,
           parallelism: {tp: 2, pp: 1, cp: 2, dp: 4, sequence_parallel: true}, zero: 1, recompute: selective}
)" + extra;
}

}  // namespace

TEST_CASE("CP plan space: auto keeps >= 4096 tokens per GPU, a list goes where it says, sliding windows stay at cp 1") {
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(long_context_yaml()));
  std::set<int> cps;
  for (const Candidate& c : enumerate_candidates(in.space, in.model, in.base, in.cluster)) {
    CHECK(c.tp * c.pp * c.cp * c.dp == 16);
    cps.insert(c.cp);
  }
  CHECK(cps == std::set<int>{1, 2, 4});  // 16384 / 4 = 4096 tokens per GPU
  const PlannerInputs pinned = PlannerInputs::from(testing::scenario_from_yaml(long_context_yaml("plan_space: {cp: 8}\n")));
  for (const Candidate& c : enumerate_candidates(pinned.space, pinned.model, pinned.base, pinned.cluster)) REQUIRE(c.cp == 8);
  // Ring attention over a sliding window is not simulated (TrainingPlan refuses it): cp 1 only.
  std::string yaml = long_context_yaml();
  yaml.replace(yaml.find("position: rope}"), 15, "position: rope, sliding_window: 4096}");
  yaml.replace(yaml.find("cp: 2, dp: 4"), 12, "cp: 1, dp: 8");
  const PlannerInputs windowed = PlannerInputs::from(testing::scenario_from_yaml(yaml));
  REQUIRE(windowed.model.sliding_window == 4096);
  for (const Candidate& c : enumerate_candidates(windowed.space, windowed.model, windowed.base, windowed.cluster))
    REQUIRE(c.cp == 1);
}

TEST_CASE("CP closed-form memory equals training_memory on every enumerated plan") {
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(long_context_yaml("plan_space: {cp: [1, 2, 4, 8]}\n")));
  Estimator est(in);
  int with_cp = 0;
  const int checked = testing::for_each_buildable_plan(in, [&](const Candidate& c, const TrainingPlan& plan) {
    const MemoryReport want = training_memory(plan);
    const MemoryEstimate got = est.memory(c);
    INFO(describe(c));
    REQUIRE(got.peak_stage == want.peak_stage);
    CHECK(got.peak_bytes == doctest::Approx(want.peak().total()).epsilon(1e-9));
    CHECK(got.activations == doctest::Approx(want.peak().activations).epsilon(1e-9));
    with_cp += c.cp > 1;
  });
  MESSAGE(checked, " plans compared, ", with_cp, " with context parallelism");
  CHECK(with_cp > 300);
}

TEST_CASE("the closed-form estimate ranks CP plans in the engine's order") {
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(long_context_yaml()));
  Estimator est(in);
  std::vector<double> estimated, simulated;
  std::set<int> cps;
  for (const Candidate& c : testing::sample_runnable(in, est, 30, 100)) {
    cps.insert(c.cp);
    estimated.push_back(est.estimate(c).iteration_time_s);
    simulated.push_back(testing::engine_time(in, c));
    INFO(describe(c), ": estimate ", estimated.back(), " s, engine ", simulated.back(), " s");
    CHECK(estimated.back() == doctest::Approx(simulated.back()).epsilon(0.15));
  }
  CHECK(cps.size() == 3);
  const double tau = kendall_tau(estimated, simulated);
  MESSAGE("Kendall tau of estimate vs engine over ", estimated.size(), " plans with cp 1, 2, 4: ", tau);
  CHECK(tau > 0.85);
}
