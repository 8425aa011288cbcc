// Plan search over ZeRO-Offload and ZeRO-Infinity: the modes are walked where the cluster's
// servers describe their host side, the closed-form memory equals the training layer's, the
// estimate lands near the engine on offloaded plans, and host memory bounds them as the
// simulator does.
#include <doctest/doctest.h>

#include "approx.hpp"

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

// A 13B-class GPT on one DGX A100 (its host: 2 TiB, PCIe Gen4, NVMe drives).
std::string offload_yaml(const std::string& model = "{layers: 40, hidden: 5120, heads: 40, ffn: 20480, vocab: 51200}",
                         const std::string& extra = "") {
  return R"(
name: offload
cluster: {node: dgx-a100, nodes: 1}
model: )" + model + R"(
training: {seq_len: 2048, global_batch: 32, micro_batch: 1, precision: bf16, attention_kernel: flash,
           parallelism: {tp: 1, pp: 1, dp: 8}, zero: 2, offload: optimizer-cpu, recompute: full}
)" + extra;
}

PlannerInputs inputs(const std::string& yaml) { return PlannerInputs::from(testing::scenario_from_yaml(yaml)); }

}  // namespace

TEST_CASE("offload plan space: every mode the host side runs, parameters offloaded only with ZeRO-3") {
  const PlannerInputs in = inputs(offload_yaml());
  std::set<std::string> modes;
  for (const Candidate& c : enumerate_candidates(in.space, in.model, in.base, in.cluster)) {
    const std::string& m = offload_modes()[c.offload];
    if (m == "params-cpu" || m == "nvme") CHECK(c.zero == 3);
    modes.insert(m);
  }
  CHECK(modes == std::set<std::string>{"none", "optimizer-cpu", "params-cpu", "nvme"});
  // Offload of a mixture of experts is not simulated: its plans keep their states on the GPUs.
  std::string moe_yaml = offload_yaml(
      "{layers: 8, hidden: 2048, heads: 16, ffn: 5632, vocab: 32000, gated_mlp: true, moe: {experts: 8, top_k: 2}}");
  moe_yaml.replace(moe_yaml.find("offload: optimizer-cpu"), 22, "offload: none");
  const PlannerInputs moe = inputs(moe_yaml);
  for (const Candidate& c : enumerate_candidates(moe.space, moe.model, moe.base, moe.cluster)) REQUIRE(c.offload == 0);
}

TEST_CASE("offload: closed-form memory equals training_memory on every enumerated plan") {
  const PlannerInputs in = inputs(offload_yaml());
  int offloaded = 0;
  const int checked = testing::check_closed_form_memory(in, 1e-9, [&](const Candidate& c, const TrainingPlan&) { offloaded += c.offload > 0; });
  MESSAGE(checked, " plans compared, ", offloaded, " offloaded");
  CHECK(offloaded > 1000);
}

TEST_CASE("offload: the estimate lands near the engine on offloaded plans and orders them as it does") {
  const PlannerInputs in = inputs(offload_yaml());
  Estimator est(in);
  std::vector<double> estimated, simulated;
  std::set<int> modes;
  const auto offloaded = [](const Candidate& c) { return c.offload > 0; };
  for (const Candidate& c : testing::sample_runnable(in, est, 30, 100, offloaded)) {
    modes.insert(c.offload);
    estimated.push_back(est.estimate(c).iteration_time_s);
    simulated.push_back(testing::engine_time(in, c));
    INFO(describe(c), ": estimate ", estimated.back(), " s, engine ", simulated.back(), " s");
    CHECK(estimated.back() == exasim::testing::approx(simulated.back()).epsilon(0.15));
  }
  CHECK(modes.size() == 3);
  const double tau = kendall_tau(estimated, simulated);
  MESSAGE("Kendall tau of estimate vs engine over ", estimated.size(), " offloaded plans: ", tau);
  CHECK(tau > 0.85);
}

TEST_CASE("offload: a plan whose optimizer states overflow the host memory is rejected as the simulator rejects it") {
  // GPT-3 175B on 8 GPUs: 16 B x 175e9 / 8 owned x 8 GPUs = 2.8 TB of the node's 2 TiB.
  const PlannerInputs in = inputs(offload_yaml("{layers: 96, hidden: 12288, heads: 96, ffn: 49152, vocab: 51200}"));
  Estimator est(in);
  LoweringProbe probe(in);
  Candidate c = candidate_of(in.base);
  c.zero = 3;
  const CheckResult r = check_candidate(est, probe, c, 0.0);
  CHECK_FALSE(r.runnable);
  CHECK(r.key == "training.offload");
  CHECK_THROWS_WITH_AS(testing::engine_time(in, c), doctest::Contains("host memory"), PlanError);
}
