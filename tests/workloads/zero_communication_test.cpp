// ZeRO communication volume per GPU against the ZeRO paper (Rajbhandari et al., SC'20, Section 7):
// data parallelism moves 2 Psi per step (reduce-scatter + all-gather of an all-reduce), ZeRO-1/2
// the same 2 Psi, ZeRO-3 3 Psi (a weight all-gather in forward and in backward, a gradient
// reduce-scatter), all per micro-batch for ZeRO-3.
#include <doctest/doctest.h>

#include "models/collective/collective_model.hpp"
#include "sim/net/analytical_network.hpp"
#include "training_fixture.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

// Bytes each GPU sends over the data-parallel group in one iteration (nccl-tests bus factor).
double dp_traffic(int zero, int micro_batches, double* layer_params = nullptr) {
  ModelSpec model = testing::gpt(4, 2048, 16, 8);  // tiny vocabulary and no position table: layers dominate
  model.position = PositionKind::kRope;
  TrainingConfig cfg = testing::config(1, 1, 8, 8 * micro_batches);
  cfg.zero = zero;
  const topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  const TrainingPlan plan(model, cfg, 8, 8);
  const TrainingGraph g = build_training_graph(plan, {cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)});
  double traffic = 0;
  for (const auto& t : g.graph.tasks()) {
    if (t.category != kDataCommTask) continue;
    const auto& op = g.comm_ops[t.comm_op];
    traffic += op.bytes * models::bus_factor(sim::to_collective(op.kind), static_cast<int>(op.ranks.size()));
  }
  if (layer_params) *layer_params = model.layer_parameter_count();
  return traffic;
}

}  // namespace

TEST_CASE("ZeRO-3 moves 1.5 times the data-parallel volume, ZeRO-1 and 2 the same") {
  double psi_layer = 0;
  const double ddp = dp_traffic(0, 1, &psi_layer);
  const double n = 8;
  // 2 Psi (n-1)/n bytes of 16-bit gradients, Psi = 4 layers (+ a tiny embedding).
  CHECK(ddp == doctest::Approx(2 * (n - 1) / n * 2 * 4 * psi_layer).epsilon(0.01));
  CHECK(dp_traffic(1, 1) == doctest::Approx(ddp).epsilon(0.01));
  CHECK(dp_traffic(2, 1) == doctest::Approx(ddp).epsilon(0.01));
  CHECK(dp_traffic(3, 1) == doctest::Approx(1.5 * ddp).epsilon(0.02));
  // ZeRO-3 repeats its gathers and reduce-scatters for every micro-batch; DDP reduces once.
  CHECK(dp_traffic(0, 4) == doctest::Approx(ddp).epsilon(0.01));
  CHECK(dp_traffic(3, 4) == doctest::Approx(4 * 1.5 * ddp).epsilon(0.02));
}

TEST_CASE("ZeRO-3 weight gathers overlap the previous layer") {
  const ModelSpec model = testing::gpt(8, 4096, 32, 8);
  TrainingConfig cfg = testing::config(1, 1, 8, 8);
  cfg.zero = 3;
  const topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  const TrainingPlan plan(model, cfg, 8, 8);
  const auto r = simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}});
  // With an ideal network the gathers cost nothing and the iteration is pure compute.
  CHECK(r.breakdown.exposed_comm < 0.01 * r.iteration_time_s);
}
