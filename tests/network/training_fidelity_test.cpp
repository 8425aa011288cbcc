// Training scenarios under both network fidelities (simulation.fidelity): on a non-blocking
// fat-tree the iteration times agree within 5%; with 4:1 oversubscription both slow down, and
// flow at least as much as analytical (it adds contention between different ops on top of each
// op's own copies, which the analytical backend counts already).
#include <doctest/doctest.h>

#include "approx.hpp"

#include "network_fixture.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::testing;

namespace {

// 8 DGX A100 nodes, one per leaf (radix 16 non-blocking, radix 10 at 4:1): tp 8 inside a node,
// pp 2 and dp 4 across nodes.
std::string scenario(const std::string& fidelity, int oversubscription) {
  const std::string radix = oversubscription == 1 ? "16" : "10";
  return "{cluster: {node: dgx-a100, nodes: 8, inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 8, "
         "switch_radix: " + radix + ", oversubscription: " + std::to_string(oversubscription) +
         "}}, model: {layers: 8, hidden: 4096, heads: 32, ffn: 16384, vocab: 51200}, training: {seq_len: 2048, "
         "global_batch: 32, micro_batch: 1, precision: bf16, parallelism: {tp: 8, pp: 2, dp: 4}}, simulation: "
         "{fidelity: " + fidelity + "}}";
}

double iteration(const std::string& yaml, bool fast_forward = true) {
  workloads::Scenario s = workloads::scenario_from_node(config::load_string(yaml, "test.yaml"), net_catalog(), ".");
  s.simulation.network.fast_forward = fast_forward;
  const workloads::TrainingPlan plan(s.model, *s.training, s.cluster.gpu_count(), s.cluster.gpus_per_node);
  return workloads::simulate_training(
             {plan, s.cluster, s.calibration.kernel, s.calibration.collective, s.cost, s.simulation.network})
      .iteration_time_s;
}

}  // namespace

TEST_CASE("training iteration times agree across fidelities on a non-blocking cluster") {
  const double analytical = iteration(scenario("analytical", 1));
  const double flow = iteration(scenario("flow", 1));
  MESSAGE("non-blocking: analytical ", analytical, " s, flow ", flow, " s");
  CHECK(flow == exasim::testing::approx(analytical).epsilon(0.05));
}

TEST_CASE("4:1 oversubscription slows training, and flow at least as much as analytical") {
  const double free_flow = iteration(scenario("flow", 1));
  const double analytical = iteration(scenario("analytical", 4));
  const double flow = iteration(scenario("flow", 4));
  MESSAGE("4:1: analytical ", analytical, " s, flow ", flow, " s; non-blocking flow ", free_flow, " s");
  CHECK(flow > 1.2 * free_flow);
  CHECK(flow >= analytical * (1 - 1e-9));
}

TEST_CASE("fast-forward does not change a training iteration under flow, with contention or without") {
  // Rounds are credited only while their op is alone on the network and nothing can start
  // before the engine's next event; with many ops in flight the result must be the plain run's.
  for (int oversubscription : {1, 4}) {
    const double fast = iteration(scenario("flow", oversubscription));
    const double plain = iteration(scenario("flow", oversubscription), false);
    CAPTURE(oversubscription);
    CHECK(fast == exasim::testing::approx(plain).epsilon(1e-9));
  }
}

TEST_CASE("simulation keys: fidelity, flow model and collective algorithms") {
  const auto s = workloads::scenario_from_node(
      config::load_string(
          "{cluster: {node: dgx-a100, nodes: 1}, model: llama2-7b, training: {seq_len: 2048, global_batch: 8, "
          "parallelism: {tp: 8}}, simulation: {fidelity: flow, flow_model: CM02, collective_algorithm: "
          "{all_reduce: tree, all_gather: ring}}}",
          "test.yaml"),
      net_catalog(), ".");
  CHECK(s.simulation.network.backend == "flow");
  CHECK(s.simulation.network.flow_model == "CM02");
  CHECK(s.simulation.network.algorithms[models::Collective::kAllReduce] == models::CollectiveAlgorithm::kTree);
  CHECK(s.simulation.network.algorithms[models::Collective::kReduceScatter] == models::CollectiveAlgorithm::kAuto);
  auto error = [](const std::string& sim) {
    try {
      workloads::scenario_from_node(
          config::load_string("{cluster: {node: dgx-a100, nodes: 1}, model: llama2-7b, training: {seq_len: 2048, "
                              "global_batch: 8}, simulation: " + sim + "}",
                              "test.yaml"),
          net_catalog(), ".");
    } catch (const Error& e) {
      return e.describe();
    }
    return std::string("no error");
  };
  CHECK(error("{collective_algorithm: rings}").find("test.yaml:1") != std::string::npos);
  CHECK(error("{collective_algorithm: {allreduce: ring}}").find("all_reduce") != std::string::npos);
  CHECK(error("{flow_model: LV09}").find("LV08") != std::string::npos);
}
