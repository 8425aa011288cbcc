// Plan search over a mixture-of-experts model: expert parallelism is enumerated, the closed-form
// memory equals the training layer's memory model, and the estimate ranks plans as the engine does.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "plan_checks.hpp"
#include "planner_fixture.hpp"
#include "workloads/planner/plan_constraints.hpp"
#include "workloads/planner/plan_estimate.hpp"
#include "workloads/planner/plan_search.hpp"
#include "workloads/planner/plan_space.hpp"
#include "workloads/planner/rank_correlation.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;
using namespace exasim::workloads::planner;

namespace {

// A small Mixtral-like model (8 experts, top-2) on two DGX A100 nodes.
std::string small_moe_yaml(const std::string& extra = "") {
  return R"(
name: small-moe
cluster: {gpu: A100-SXM4-80GB, gpus_per_node: 8, nodes: 2, intra_node: nvswitch-a100,
          inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 8}}
model: {layers: 8, hidden: 2048, heads: 16, kv_heads: 4, ffn: 5632, vocab: 32000, gated_mlp: true, activation: silu,
        norm: rmsnorm, position: rope, moe: {experts: 8, top_k: 2, expert_ffn: 5632}}
training: {seq_len: 2048, global_batch: 64, micro_batch: 1, precision: bf16, attention_kernel: flash,
           parallelism: {tp: 1, pp: 1, dp: 16, ep: 8}, zero: 1, recompute: none}
)" + extra;
}

}  // namespace

TEST_CASE("MoE plan space: every expert-parallel degree that divides the experts and tp x cp x dp, etp 1 or tp, dense models ep 1") {
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(small_moe_yaml()));
  std::set<int> eps;
  int split_experts = 0;
  for (const Candidate& c : enumerate_candidates(in.space, in.model, in.base, in.cluster)) {
    CHECK(in.model.moe->experts % c.ep == 0);
    CHECK((c.tp * c.cp * c.dp) % (c.ep * c.etp) == 0);
    CHECK((c.etp == 1 || c.etp == c.tp));  // auto: experts whole, or split as the dense layers
    eps.insert(c.ep);
    split_experts += c.etp > 1;
  }
  CHECK(eps == std::set<int>{1, 2, 4, 8});
  CHECK(split_experts > 0);
  const PlannerInputs dense = PlannerInputs::from(testing::scenario_from_yaml(testing::small_gpt_yaml()));
  for (const Candidate& c : enumerate_candidates(dense.space, dense.model, dense.base, dense.cluster)) REQUIRE(c.ep == 1);
  // plan_space pins it like the other degrees.
  const PlannerInputs pinned = PlannerInputs::from(testing::scenario_from_yaml(small_moe_yaml("plan_space: {ep: 4}\n")));
  for (const Candidate& c : enumerate_candidates(pinned.space, pinned.model, pinned.base, pinned.cluster)) REQUIRE(c.ep == 4);
}

TEST_CASE("MoE closed-form memory equals training_memory on every enumerated plan") {
  // Dense weights sharded over dp, routed experts over their tp x dp / (ep etp) replicas; the
  // second model has DeepSeek's layout: leading dense layers and a shared expert.
  std::string deepseek_like = small_moe_yaml();
  const std::string moe = "moe: {experts: 8, top_k: 2, expert_ffn: 5632}";
  deepseek_like.replace(deepseek_like.find(moe), moe.size(),
                        "moe: {experts: 8, top_k: 2, expert_ffn: 2816, shared_experts: 1, dense_layers: 3}");
  // Offload too: one layer's gradient bucket on the GPU, its widest layer's part; with the parameters, two layers.
  for (const std::string& yaml : {small_moe_yaml(), deepseek_like}) {
    const PlannerInputs in =
        PlannerInputs::from(testing::scenario_from_yaml(yaml + "plan_space: {offload: [none, optimizer-cpu, params-cpu]}\n"));
    const int checked = testing::check_closed_form_memory(in, 1e-9);
    MESSAGE(checked, " MoE plans compared");
    CHECK(checked > 500);
  }
  // Hybrid sharding: the experts' replicas split into the dense weights' copies.
  std::string hybrid = small_moe_yaml();
  hybrid.replace(hybrid.find("zero: 1"), 7, "zero: 1, shard_group: 8");
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(hybrid + "plan_space: {offload: [none, optimizer-cpu, params-cpu]}\n"));
  int copies = 0;
  const int checked = testing::check_closed_form_memory(in, 1e-9, [&](const Candidate&, const TrainingPlan& plan) {
    copies += plan.shard_replicas() > 1 && plan.expert_replicas() > 1;
  });
  MESSAGE(checked, " hybrid-sharded MoE plans compared, ", copies, " with experts split into copies");
  CHECK(copies > 100);
}

TEST_CASE("the closed-form estimate ranks MoE plans in the engine's order") {
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(small_moe_yaml()));
  Estimator est(in);
  std::vector<double> estimated, simulated;
  std::set<int> eps;
  for (const Candidate& c : testing::sample_runnable(in, est, 30, 100)) {
    eps.insert(c.ep);
    estimated.push_back(est.estimate(c).iteration_time_s);
    simulated.push_back(testing::engine_time(in, c));
    INFO(describe(c), ": estimate ", estimated.back(), " s, engine ", simulated.back(), " s");
    CHECK(estimated.back() == exasim::testing::approx(simulated.back()).epsilon(0.15));
  }
  CHECK(eps.size() >= 3);  // the sample spans expert-parallel degrees
  const double tau = kendall_tau(estimated, simulated);
  MESSAGE("Kendall tau of estimate vs engine over ", estimated.size(), " MoE plans: ", tau);
  CHECK(tau > 0.85);
}

TEST_CASE("plan search over a MoE model ranks expert-parallel plans and beats a plan without EP") {
  const PlannerInputs in = PlannerInputs::from(testing::scenario_from_yaml(small_moe_yaml()));
  SearchOptions o;
  o.top_k = 5;
  Candidate no_ep = candidate_of(in.base);
  no_ep.ep = 1;
  o.also_simulate = {no_ep};
  const SearchResult r = search_plans(in, o);
  REQUIRE(!r.plans.empty());
  CHECK(r.plans.front().candidate.ep > 1);
  const auto it = std::find_if(r.plans.begin(), r.plans.end(), [](const RankedPlan& p) { return p.requested; });
  REQUIRE(it != r.plans.end());
  // Without EP every GPU holds all 8 experts (and their gradients are reduced over all 16 GPUs).
  CHECK(r.plans.front().simulated.iteration_time_s < it->simulated.iteration_time_s);
}
