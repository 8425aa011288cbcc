// The closed-form memory of the search against the training layer's memory model (which walks
// each schedule's order): equal for every schedule, split and ZeRO stage.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <optional>

#include "plan_checks.hpp"
#include "planner_fixture.hpp"
#include "workloads/planner/plan_estimate.hpp"
#include "workloads/planner/plan_space.hpp"
#include "workloads/training/pipeline_schedule.hpp"
#include "workloads/training/training_memory.hpp"

using namespace exasim;
using namespace exasim::workloads;
using namespace exasim::workloads::planner;

TEST_CASE("closed-form memory equals training_memory on every enumerated plan of a space") {
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(testing::small_gpt_yaml()));
  const int checked = testing::check_closed_form_memory(in, 1e-12);
  MESSAGE(checked, " plans compared");
  CHECK(checked > 500);
}

// Hybrid sharding given in the scenario (shard_group): states sharded over groups of 4 weight
// replicas, replicated across; the plans where 4 does not divide dp x cp are refused by both.
TEST_CASE("closed-form memory equals training_memory with hybrid sharding") {
  std::string yaml = testing::small_gpt_yaml();
  yaml.replace(yaml.find("zero: 1"), 7, "zero: 1, shard_group: 4");
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(yaml));
  REQUIRE(in.base.shard_group == 4);
  int hybrid = 0;
  const int checked =
      testing::check_closed_form_memory(in, 1e-12, [&](const Candidate&, const TrainingPlan& plan) { hybrid += plan.shard_replicas() > 1; });
  MESSAGE(checked, " plans compared, ", hybrid, " with more than one copy");
  CHECK(hybrid > 100);
}

// LoRA: frozen 16-bit weights and the adapters' states. The closed form once counted every
// weight's gradients and Adam states (1.7-3.1x the memory on Llama 2 13B) and refused plans that fit.
TEST_CASE("closed-form memory equals training_memory on every enumerated plan of a LoRA fine-tuning space") {
  const std::string lora = "lora: {rank: 16, targets: [qkv, attn_out, mlp_up, mlp_down]}, ";
  std::string yaml = testing::small_gpt_yaml("plan_space: {offload: [none, optimizer-cpu, params-cpu]}\n");
  yaml.replace(yaml.find("training: {"), 11, "training: {" + lora);
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(yaml));
  REQUIRE(in.base.lora);
  int zero3 = 0, offloaded = 0;  // FSDP-LoRA: the frozen weights and the adapters sharded and gathered; ZeRO-Offload of the adapters
  const int checked = testing::check_closed_form_memory(in, 1e-12, [&](const Candidate& c, const TrainingPlan&) {
    zero3 += c.zero >= 3;
    offloaded += c.offload > 0;
  });
  MESSAGE(checked, " LoRA plans compared, ", zero3, " with ZeRO-3, ", offloaded, " offloaded");
  CHECK(checked > 100);
  CHECK(zero3 > 0);
  CHECK(offloaded > 0);
}

TEST_CASE("uneven split as Llama 3 405B uses it: 126 layers on 16 x 2 virtual stages") {
  const auto split = uneven_split(126, 32);
  REQUIRE(split);
  CHECK(split->first == 3);  // Llama 3 paper, Section 3.3.2: one fewer layer on the first and last stage
  CHECK(split->second == 3);
  CHECK((126 - 3 - 3) % 30 == 0);
  CHECK_FALSE(uneven_split(24, 2));   // no middle stages
  CHECK_FALSE(uneven_split(10, 16));  // more stages than layers
}

TEST_CASE("in-flight passes follow the schedules' warm-up formulas") {
  // 1F1B: stage s of p holds min(p - s, m) (Narayanan et al., SC'21, 2.2.1); GPipe all m.
  CHECK(in_flight_passes("1f1b", 0, 8, 32, 1) == 8);
  CHECK(in_flight_passes("1f1b", 7, 8, 32, 1) == 1);
  CHECK(in_flight_passes("1f1b", 0, 8, 4, 1) == 4);
  CHECK(in_flight_passes("gpipe", 3, 8, 32, 1) == 32);
  // Interleaved: warm-up 2 (p - s - 1) + (v - 1) p passes, then one more forward.
  CHECK(in_flight_passes("interleaved", 0, 4, 8, 2) == 2 * 3 + 4 + 1);
  // ZB-H2's closed form (Qi et al.: 2p - 1 micro-batches) against the walk of the order it runs.
  const auto* h2 = workloads::find_pipeline_schedule("zero-bubble-h2");
  REQUIRE(h2 != nullptr);
  for (int p : {1, 3, 8})
    for (int m : {1, p, 2 * p - 1, 4 * p})
      for (int s = 0; s < p; ++s) CHECK(in_flight_passes("zero-bubble-h2", s, p, m, 1) == workloads::peak_in_flight(*h2, s, p, m, 1));
}
