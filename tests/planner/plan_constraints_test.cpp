// The constraint check against rules written out independently: a generated list of plans,
// valid and invalid, must be sorted exactly as the rules (divisibility, GPU count, TP inside a
// node, virtual stages with the interleaved schedule) and the simulator's own memory check say.
#include <doctest/doctest.h>

#include "planner_fixture.hpp"
#include "workloads/planner/plan_constraints.hpp"
#include "workloads/training/pipeline_schedule.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;
using namespace exasim::workloads::planner;

namespace {

std::uint8_t schedule(const std::string& name) {
  const auto& t = pipeline_schedules();
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i].name == name) return static_cast<std::uint8_t>(i);
  FAIL("no schedule " << name);
  return 0;
}

// The rules of a runnable plan for the 24-layer, 16-head model on 2 x 8 GPUs, global batch 64,
// written from the plan's definition (not from the code under test).
bool structurally_valid(const Candidate& c) {
  const bool interleaved = pipeline_schedules()[c.schedule].interleaved;
  if (c.tp * c.pp * c.dp != 16) return false;          // every GPU used once
  if (16 % c.tp != 0 || 8192 % c.tp != 0) return false;  // heads and ffn split evenly
  if (c.tp > 8 || 8 % c.tp != 0) return false;           // TP group inside one node
  if (24 % (c.pp * c.vpp) != 0) return false;            // layers split evenly over virtual stages
  if (64 % c.dp != 0 || (64 / c.dp) % c.micro_batch != 0) return false;  // batch splits
  if (c.vpp > 1 && !interleaved) return false;           // virtual stages need interleaving
  if (interleaved && c.pp > 1 && (64 / c.dp / c.micro_batch) % c.pp != 0) return false;
  return true;
}

}  // namespace

TEST_CASE("constraint checks reject every invalid plan of a generated list and accept the valid ones") {
  const Scenario s = testing::scenario_from_yaml(testing::small_gpt_yaml());
  const PlannerInputs in = PlannerInputs::from(s);
  Estimator est(in);
  LoweringProbe probe(in);
  std::vector<Candidate> list;
  for (int tp : {1, 2, 3, 4, 8, 16})
    for (int pp : {1, 2, 3, 4, 5})
      for (int dp : {1, 2, 4, 8, 16})
        for (int vpp : {1, 2, 3})
          for (int mb : {1, 3, 4, 16})
            for (const char* sched : {"1f1b", "interleaved", "gpipe", "zero-bubble"})
              for (int zero : {0, 3})
                for (auto rc : {models::Recompute::kNone, models::Recompute::kFull}) {
                  Candidate c;
                  c.tp = tp, c.pp = pp, c.dp = dp, c.vpp = vpp, c.micro_batch = mb;
                  c.schedule = schedule(sched);
                  c.zero = static_cast<std::uint8_t>(zero);
                  c.recompute = rc;
                  c.sequence_parallel = tp > 1;
                  list.push_back(c);
                }
  int valid = 0, invalid = 0, oom = 0;
  for (const Candidate& c : list) {
    bool expected = structurally_valid(c);
    if (expected) {
      // What the simulator itself says: the lowering refuses some kinds, memory must fit.
      const TrainingPlan plan(in.model, candidate_config(in.base, c), 16, 8);
      try {
        build_training_graph(plan, {in.cluster.gpu, in.calibration.kernel});
        check_training_memory(plan, in.cluster);
      } catch (const PlanError&) {
        expected = false;
        ++oom;
      }
    }
    const CheckResult r = check_candidate(est, probe, c, 0.0);
    INFO(describe(c), ": ", r.reason);
    CHECK(r.runnable == expected);
    (expected ? valid : invalid)++;
  }
  MESSAGE(list.size(), " plans: ", valid, " valid, ", invalid, " invalid (", oom, " refused by the lowering or memory)");
  CHECK(valid > 100);
  CHECK(invalid > 1000);
}

TEST_CASE("a memory margin rejects plans that fit only without it") {
  const Scenario s = testing::scenario_from_yaml(testing::small_gpt_yaml());
  const PlannerInputs in = PlannerInputs::from(s);
  Estimator est(in);
  LoweringProbe probe(in);
  Candidate c = candidate_of(*s.training);
  const CheckResult plain = check_candidate(est, probe, c, 0.0);
  REQUIRE(plain.runnable);
  const double used = plain.memory.peak_bytes / s.cluster.gpu.hbm_capacity_bytes;
  CHECK(check_candidate(est, probe, c, 1 - used * 0.99).runnable == false);
  CHECK(check_candidate(est, probe, c, 1 - used * 1.01).runnable == true);
}

TEST_CASE("tensor parallelism across nodes only when the plan space allows it") {
  const Scenario s = testing::scenario_from_yaml(testing::small_gpt_yaml("plan_space: {allow_tp_across_nodes: true}\n"));
  const PlannerInputs in = PlannerInputs::from(s);
  Estimator est(in);
  LoweringProbe probe(in);
  Candidate c;
  c.tp = 16, c.pp = 1, c.dp = 1, c.micro_batch = 1, c.schedule = schedule("1f1b");
  c.sequence_parallel = true;
  CHECK(check_candidate(est, probe, c, 0.0).runnable);
  const Scenario strict = testing::scenario_from_yaml(testing::small_gpt_yaml());
  const PlannerInputs in2 = PlannerInputs::from(strict);
  Estimator est2(in2);
  LoweringProbe probe2(in2);
  CHECK_FALSE(check_candidate(est2, probe2, c, 0.0).runnable);
}
