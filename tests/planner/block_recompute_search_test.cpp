// Plan search over block recompute (full recompute of the first N layers of each model chunk):
// the search takes the fewest layers that fit, the closed-form memory equals the training
// layer's for every N, and the estimate lands near the engine, between no and full recompute.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "plan_checks.hpp"
#include "planner_fixture.hpp"
#include "workloads/planner/plan_constraints.hpp"
#include "workloads/planner/plan_estimate.hpp"
#include "workloads/planner/plan_space.hpp"
#include "workloads/training/training_memory.hpp"

using namespace exasim;
using namespace exasim::workloads;
using namespace exasim::workloads::planner;

namespace {

// A 30B-class GPT on one DGX A100 whose activations do not fit without recompute at 4 stages.
std::string tight_yaml(const std::string& space) {
  return R"(
name: block-recompute
cluster: {gpu: A100-SXM4-80GB, gpus_per_node: 8, nodes: 1, intra_node: nvswitch-a100}
model: {layers: 48, hidden: 7168, heads: 56, ffn: 28672, vocab: 51200, max_seq_len: 8192}
training: {seq_len: 8192, global_batch: 32, micro_batch: 1, precision: bf16, attention_kernel: flash,
           parallelism: {tp: 2, pp: 4, dp: 1, sequence_parallel: true}, zero: 1, recompute: full}
plan_space: )" + space + "\n";
}

PlannerInputs inputs(const std::string& space) { return PlannerInputs::from(testing::scenario_from_yaml(tight_yaml(space))); }

}  // namespace

TEST_CASE("block recompute search: the fewest layers of a chunk that fit, as the training layer counts memory") {
  const PlannerInputs in = inputs("{tp: [2], pp: [4], micro_batch: [1], schedule: [1f1b], recompute: [none, full, block]}");
  Estimator est(in);
  LoweringProbe probe(in);
  Candidate none = candidate_of(in.base), full = none, block = none;
  none.recompute = models::Recompute::kNone;
  block.recompute_layers = Candidate::kFewestThatFit;
  REQUIRE_FALSE(check_candidate(est, probe, none, 0.0).runnable);  // too big without recompute
  REQUIRE(check_candidate(est, probe, full, 0.0).runnable);
  const CheckResult r = check_candidate(est, probe, block, 0.0);
  REQUIRE(r.runnable);
  const int n = r.candidate.recompute_layers;
  REQUIRE(n > 0);
  REQUIRE(n < 12);  // 12 layers a stage
  // The training layer's memory for N and N - 1: N fits the GPU, N - 1 does not.
  const double capacity = in.cluster.gpu.hbm_capacity_bytes;
  auto engine_peak = [&](int layers) {
    Candidate c = full;
    c.recompute_layers = layers;
    const TrainingPlan plan(in.model, candidate_config(in.base, c), in.cluster.gpu_count(), in.cluster.gpus_per_node);
    CHECK(est.memory(c).peak_bytes == exasim::testing::approx(training_memory(plan).peak().total()).epsilon(1e-9));
    return training_memory(plan).peak().total();
  };
  CHECK(engine_peak(n) <= capacity);
  if (n > 1) CHECK(engine_peak(n - 1) > capacity);
  for (int k = 1; k < 12; ++k) engine_peak(k);  // the closed form equals the training layer's for every N
  // The search walks it and keeps it: the best plan recomputes n layers a stage and beats full recompute.
  const double t_block = testing::engine_time(in, r.candidate), t_full = testing::engine_time(in, full);
  MESSAGE("block recompute: ", n, " of 12 layers a stage, engine ", t_block, " s (full: ", t_full, " s), estimate ",
          est.estimate(r.candidate).iteration_time_s, " s");
  CHECK(t_block < t_full);
  CHECK(est.estimate(r.candidate).iteration_time_s == exasim::testing::approx(t_block).epsilon(0.05));
}

TEST_CASE("block recompute search: only where it adds a plan, and `recompute: [block]` alone walks only it") {
  const PlannerInputs only = inputs("{tp: [2], pp: [4], micro_batch: [1], schedule: [1f1b], recompute: [block]}");
  for (const Candidate& c : enumerate_candidates(only.space, only.model, only.base, only.cluster)) {
    CHECK(c.recompute == models::Recompute::kFull);
    CHECK(c.recompute_layers == Candidate::kFewestThatFit);
  }
  const PlannerInputs listed = inputs("{tp: [2], pp: [4], recompute: [none, full]}");
  for (const Candidate& c : enumerate_candidates(listed.space, listed.model, listed.base, listed.cluster))
    CHECK(c.recompute_layers == 0);
  // Where recompute none fits (tp 8 on one stage), block recompute is refused by name.
  const PlannerInputs roomy = inputs("{tp: [8], pp: [1], recompute: [block]}");
  Estimator est(roomy);
  LoweringProbe probe(roomy);
  int refused = 0;
  for (const Candidate& c : enumerate_candidates(roomy.space, roomy.model, roomy.base, roomy.cluster)) {
    const CheckResult r = check_candidate(est, probe, c, 0.0);
    if (r.key == "training.recompute_layers") ++refused;
  }
  CHECK(refused > 0);
}
