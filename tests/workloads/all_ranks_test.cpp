// Every rank simulated (simulation.all_ranks): on a uniform cluster it must give what symmetry
// gives (DESIGN.md: "Both must agree on uniform clusters — that is a test"), for every
// parallelism and schedule, at both fidelities; a straggler must cost what a hand calculation
// says when its kernels are on every critical path.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "hw/config/node.hpp"
#include "hw/error.hpp"
#include "training_fixture.hpp"
#include "workloads/planner/plan_evaluation.hpp"
#include "workloads/planner/planner_inputs.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/all_ranks.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

// Two DGX A100 nodes on a fat-tree; a small model so every rank's copy stays cheap.
std::string scenario_text(const std::string& parallelism, const std::string& extra = "",
                          const std::string& model = "{layers: 8, hidden: 1024, heads: 16, kv_heads: 16, ffn: 4096, vocab: 32000}") {
  return "cluster: {gpu: A100-SXM4-80GB, gpus_per_node: 8, nodes: 2,\n"
         "          inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 8}}\n"
         "model: " + model + "\n"
         "training:\n"
         "  seq_len: 2048\n"
         "  global_batch: 32\n"
         "  micro_batch: 1\n"
         "  precision: bf16\n"
         "  parallelism: " + parallelism + "\n" + extra;
}

Scenario load(const std::string& text) {
  return scenario_from_node(config::load_string(text, "<test>"), testing::catalog(), ".");
}

TrainingResult simulate(const Scenario& s, const RankSimulation& ranks, const std::string& fidelity = "analytical") {
  const TrainingPlan plan(s.model, *s.training, s.cluster.gpu_count(), s.cluster.gpus_per_node);
  sim::NetworkOptions net = s.simulation.network;
  net.backend = fidelity;
  return simulate_training({plan, s.cluster, s.calibration.kernel, s.calibration.collective, s.cost, net, ranks});
}

void check_same(const TrainingResult& a, const TrainingResult& b) {
  auto close = [](double x, double y) { return std::abs(x - y) <= 1e-12 * std::max(1.0, std::abs(x)); };
  CHECK(close(a.iteration_time_s, b.iteration_time_s));
  CHECK(close(a.breakdown.compute, b.breakdown.compute));
  CHECK(close(a.breakdown.exposed_comm, b.breakdown.exposed_comm));
  CHECK(close(a.breakdown.bubble, b.breakdown.bubble));
  CHECK(close(a.hfu, b.hfu));
}

}  // namespace

TEST_CASE("all_ranks: every parallelism and schedule gives what symmetry gives on a uniform cluster") {
  const std::string moe = "{layers: 4, hidden: 1024, heads: 16, kv_heads: 8, ffn: 2048, vocab: 32000, moe: {experts: 8, top_k: 2}}";
  struct Case {
    const char* name;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"tp2 pp2 dp4 1f1b zero1", scenario_text("{tp: 2, pp: 2, dp: 4, sequence_parallel: true}", "  zero: 1\n")},
      {"tp4 pp2 dp2 interleaved", scenario_text("{tp: 4, pp: 2, dp: 2, vpp: 2}", "  pipeline_schedule: interleaved\n")},
      {"tp2 pp4 dp2 zero-bubble", scenario_text("{tp: 2, pp: 4, dp: 2}", "  pipeline_schedule: zero-bubble\n")},
      {"tp2 dp8 zero3", scenario_text("{tp: 2, pp: 1, dp: 8}", "  zero: 3\n")},
      {"dp16 zero3 hybrid 8", scenario_text("{tp: 1, pp: 1, dp: 16}", "  zero: 3\n  shard_group: 8\n")},
      {"tp2 dp8 zero1 hybrid 4", scenario_text("{tp: 2, pp: 1, dp: 8}", "  zero: 1\n  shard_group: 4\n")},
      {"tp2 cp2 dp4 ddp", scenario_text("{tp: 2, cp: 2, pp: 1, dp: 4}", "  zero: 0\n")},
      {"moe ep4 dp8 tp2", scenario_text("{tp: 2, pp: 2, dp: 4, ep: 4, sequence_parallel: true}", "", moe)},
      {"moe ep4 dp16 zero1 hybrid 8", scenario_text("{tp: 1, pp: 1, dp: 16, ep: 4}", "  zero: 1\n  shard_group: 8\n", moe)},
      {"moe ep2 dp16 zero3 hybrid 4", scenario_text("{tp: 1, pp: 1, dp: 16, ep: 2}", "  zero: 3\n  shard_group: 4\n", moe)},
      {"tp2 pp4 dp2 zero-bubble-h2", scenario_text("{tp: 2, pp: 4, dp: 2}", "  pipeline_schedule: zero-bubble-h2\n")},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Scenario s = load(c.text);
    const TrainingResult sym = simulate(s, {});
    const TrainingResult all = simulate(s, {true, {}});
    check_same(sym, all);
    // Every rank has its own program: tp x cp x dp copies of each stage's tasks, plus barriers.
    CHECK(all.tasks > sym.tasks * static_cast<std::size_t>(s.cluster.gpu_count() / s.training->parallelism.pp));
    // Each copy of a collective runs on a GPU that is one of its op's members.
    const TrainingGraph& g = *all.graph;
    const std::uint32_t Q = static_cast<std::uint32_t>(s.cluster.gpu_count() / s.training->parallelism.pp);
    const std::uint32_t pp = static_cast<std::uint32_t>(s.training->parallelism.pp);
    bool members = true;
    for (const sim::Task& t : g.graph.tasks()) {
      if (t.comm_op == sim::kNone) continue;
      const sim::DeviceId d = g.graph.streams()[t.stream].device;
      const std::uint32_t rank = d / pp + Q * (d % pp);
      const auto& ranks = g.comm_ops[t.comm_op].ranks;
      members = members && std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
    }
    CHECK(members);
  }
}

TEST_CASE("all_ranks: at flow fidelity every group's traffic is real and still matches symmetry's copies") {
  const Scenario s = load(scenario_text("{tp: 2, pp: 2, dp: 4, sequence_parallel: true}", "  zero: 1\n"));
  const TrainingResult sym = simulate(s, {}, "flow");
  const TrainingResult all = simulate(s, {true, {}}, "flow");
  CHECK(all.iteration_time_s == exasim::testing::approx(sym.iteration_time_s).epsilon(1e-9));
  CHECK(all.breakdown.exposed_comm == exasim::testing::approx(sym.breakdown.exposed_comm).epsilon(1e-6));
}

// With one pipeline stage every kernel of every rank is on the critical path (ranks meet at each
// collective), so a GPU whose kernels take s times as long adds (s - 1) x its kernel time.
TEST_CASE("all_ranks: a straggler slows the iteration by (slowdown - 1) x its kernel time") {
  for (const char* par : {"{tp: 1, pp: 1, dp: 16}", "{tp: 4, pp: 1, dp: 4}"}) {
    CAPTURE(par);
    const Scenario s = load(scenario_text(par, "  zero: 1\n  overlap_grad_reduce: false\n"));
    const TrainingResult uniform = simulate(s, {true, {}});
    const double kernels = uniform.breakdown.compute + uniform.breakdown.optimizer;
    const double slowdown = 1.5;
    const TrainingResult slow = simulate(s, {true, {{5, slowdown}}});
    CHECK(slow.iteration_time_s - uniform.iteration_time_s == exasim::testing::approx((slowdown - 1) * kernels).epsilon(0.02));
    // Symmetry cannot see it; a faster GPU does not help (the others still set the pace).
    const TrainingResult fast = simulate(s, {true, {{5, 0.5}}});
    CHECK(fast.iteration_time_s == exasim::testing::approx(uniform.iteration_time_s).epsilon(1e-9));
  }
}

TEST_CASE("all_ranks: a straggler in one pipeline stage slows the whole pipeline") {
  const Scenario s = load(scenario_text("{tp: 2, pp: 4, dp: 2}", "  pipeline_schedule: 1f1b\n"));
  const TrainingResult uniform = simulate(s, {true, {}});
  // Rank 14 is in the last stage (4 ranks a stage: 12..15), which also runs the LM head and sets
  // the pace; rank 2 is in the first.
  const TrainingResult last = simulate(s, {true, {{14, 1.3}}});
  const TrainingResult first = simulate(s, {true, {{2, 1.3}}});
  MESSAGE("uniform " << uniform.iteration_time_s << " s, straggler in the last stage " << last.iteration_time_s
                     << " s, in the first " << first.iteration_time_s << " s");
  CHECK(last.iteration_time_s > uniform.iteration_time_s * 1.15);
  CHECK(first.iteration_time_s > uniform.iteration_time_s);
  CHECK(first.iteration_time_s < last.iteration_time_s);
  // No more than if every kernel of the job were 1.3x slower.
  CHECK(last.iteration_time_s < uniform.iteration_time_s * 1.3);
}

TEST_CASE("all_ranks: stragglers are checked where they are given") {
  // Without all_ranks.
  CHECK_THROWS_WITH_AS(load(scenario_text("{tp: 2, pp: 1, dp: 8}", "simulation: {stragglers: [{rank: 1, slowdown: 1.2}]}\n")),
                       doctest::Contains("stragglers need every rank simulated"), ConfigError);
  // A rank outside the cluster, and a slowdown that is not a time factor.
  CHECK_THROWS_WITH_AS(
      load(scenario_text("{tp: 2, pp: 1, dp: 8}", "simulation: {all_ranks: true, stragglers: [{rank: 16, slowdown: 1.2}]}\n")),
      doctest::Contains("rank 16 is not in the cluster (16 GPUs)"), ConfigError);
  CHECK_THROWS_WITH_AS(
      load(scenario_text("{tp: 2, pp: 1, dp: 8}", "simulation: {all_ranks: true, stragglers: [{rank: 3, slowdown: 0}]}\n")),
      doctest::Contains("slowdown must be > 0"), ConfigError);
  const Scenario ok = load(scenario_text("{tp: 2, pp: 1, dp: 8}", "simulation: {all_ranks: true, stragglers: [{rank: 3, slowdown: 1.2}]}\n"));
  CHECK(ok.simulation.all_ranks);
  REQUIRE(ok.simulation.stragglers.size() == 1);
  CHECK(ok.simulation.stragglers[0].rank == 3);
  CHECK(ok.simulation.stragglers[0].slowdown == 1.2);
  // The library refuses stragglers under symmetry too.
  CHECK_THROWS_AS(simulate(load(scenario_text("{tp: 2, pp: 1, dp: 8}")), {false, {{1, 1.2}}}), PlanError);
}

TEST_CASE("all_ranks: a power cap that slows the kernels re-runs the whole graph, barriers included, as symmetry does") {
  const std::string text = scenario_text("{tp: 2, pp: 2, dp: 4, sequence_parallel: true}", "  zero: 1\npower: {gpu_cap: 250 W}\n");
  Scenario sym = load(text), all = load(text + "simulation: {all_ranks: true}\n");
  REQUIRE(all.simulation.all_ranks);
  const planner::PlannerInputs a = planner::PlannerInputs::from(sym), b = planner::PlannerInputs::from(all);
  const TrainingPlan plan(sym.model, *sym.training, sym.cluster.gpu_count(), sym.cluster.gpus_per_node);
  const planner::PlanEvaluation x = planner::evaluate_plan(a, plan), y = planner::evaluate_plan(b, plan);
  CHECK(x.power.mean_clock < 1);  // the cap binds
  CHECK(y.result.iteration_time_s == exasim::testing::approx(x.result.iteration_time_s).epsilon(1e-12));
  CHECK(y.result.gpu_power_w == exasim::testing::approx(x.result.gpu_power_w).epsilon(1e-9));
  CHECK(y.result.tasks > x.result.tasks);
}

// The expansion copies each task onto its stream on every replica; a stream-less task in the
// symmetric graph is refused with its name instead of being indexed out of range.
TEST_CASE("all_ranks: a symmetric graph with a stream-less task is refused, not expanded") {
  const Scenario s = load(scenario_text("{tp: 2, pp: 1, dp: 8}"));
  const TrainingPlan plan(s.model, *s.training, s.cluster.gpu_count(), s.cluster.gpus_per_node);
  TrainingGraph g = build_training_graph(plan, {s.cluster.gpu, s.calibration.kernel});
  CHECK_NOTHROW(expand_to_all_ranks(g, plan, {}));
  g.graph.add_barrier("a join");
  CHECK_THROWS_WITH_AS(expand_to_all_ranks(g, plan, {}), doctest::Contains("'a join' has no stream"), std::logic_error);
}
