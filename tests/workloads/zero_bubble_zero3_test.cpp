// ZB-H1 with ZeRO-3: the forward and the input-gradient pass (B) gather a layer's weights, the
// weight-gradient pass (W) needs none (dW = X^T dY) and reduce-scatters the layer's gradients once
// they are final, so the traffic stays the ZeRO paper's 3 Psi per layer and micro-batch; with free
// communication the step is the one without sharding.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <map>
#include <string>

#include "models/kernel/kernel_params.hpp"
#include "graph_traffic.hpp"
#include "training_fixture.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

TrainingConfig zb(int zero) {
  TrainingConfig c = testing::config(1, 4, 2, 16);  // pp 4, dp 2, 8 micro-batches per replica
  c.pipeline_schedule = "zero-bubble";
  c.zero = zero;
  return c;
}

}  // namespace

TEST_CASE("zero-bubble with ZeRO-3: two gathers (F, B) and one reduce-scatter (after W) per layer and micro-batch") {
  const ModelSpec m = testing::gpt(8, 2048, 16);
  const TrainingPlan plan(m, zb(3), 8, 8);
  const topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  const TrainingGraph g = build_training_graph(plan, {cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)});
  auto traffic = testing::traffic_by_label(g);
  const int per_iteration = 8 * 8;  // 8 layers (2 per stage, every stage) x 8 micro-batches
  CHECK(traffic["fsdp gather (fwd)"].count == per_iteration);
  CHECK(traffic["fsdp gather (bwd)"].count == per_iteration);
  CHECK(traffic["fsdp reduce-scatter grads"].count == per_iteration);
  CHECK(traffic["fsdp gather (fwd)"].bytes == exasim::testing::approx(2 * m.layer_parameter_count()));
  CHECK(traffic["fsdp reduce-scatter grads"].bytes == exasim::testing::approx(2 * m.layer_parameter_count()));
}

TEST_CASE("zero-bubble with ZeRO-3: with free communication, the step of ZeRO-1") {
  const ModelSpec m = testing::gpt(8, 2048, 16);
  const topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  auto step = [&](int zero) {
    const TrainingPlan plan(m, zb(zero), 8, 8);
    return simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}});
  };
  const TrainingResult three = step(3), one = step(1);
  // The weight gathers hold SMs while they run (the engine's compute share), so not exactly equal.
  CHECK(three.iteration_time_s == exasim::testing::approx(one.iteration_time_s).epsilon(0.05));
  CHECK(three.breakdown.bubble == exasim::testing::approx(one.breakdown.bubble).epsilon(0.1));
}
