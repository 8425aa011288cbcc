// The training framework's host work (calibration `training:`): the host dispatches each pass
// ahead of the GPU, so its cost shows only where it is slower than the GPU work it feeds; the
// end-of-iteration work adds its whole time. Checked against closed forms on one GPU.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "hw/config/node.hpp"
#include "hw/error.hpp"
#include "models/calibration/calibration_file.hpp"
#include "training_fixture.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

struct Run {
  double iteration = 0, fwd = 0, bwd = 0, optimizer = 0, host = 0, bubble = 0;
};

Run simulate(models::HostOverheads host, int m = 8) {
  const ModelSpec model = testing::gpt(4, 2048, 16, 8);
  const TrainingConfig cfg = testing::config(1, 1, 1, m);
  const topologies::Cluster cluster = testing::ideal_cluster(1, 1);
  const TrainingPlan plan(model, cfg, 1, 1);
  const TrainingResult r = simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}, {}, {}, host});
  Run out;
  out.iteration = r.iteration_time_s;
  out.optimizer = r.breakdown.optimizer;
  out.host = r.breakdown.host;
  out.bubble = r.breakdown.bubble;
  for (const auto& t : r.graph->graph.tasks()) {
    if (t.category == kForwardTask) out.fwd += t.duration / m;
    if (t.category == kBackwardTask) out.bwd += t.duration / m;
  }
  return out;
}

}  // namespace

TEST_CASE("host overheads: hidden while the GPU is the slower side, the pace when the host is") {
  const Run gpu = simulate({});
  REQUIRE(gpu.fwd > 0);
  // A dispatch far shorter than a pass: only the very first one is exposed.
  const double small = 0.1 * gpu.fwd;
  const Run hidden = simulate({small, 0});
  CHECK(hidden.iteration - gpu.iteration == exasim::testing::approx(small / 2).epsilon(0.01));
  // A dispatch far longer than a pass: the host sets the pace, 2 m half-dispatches back to back,
  // then the last backward and the optimizer.
  const double big = 10 * (gpu.fwd + gpu.bwd);
  const Run bound = simulate({big, 0});
  CHECK(bound.iteration == exasim::testing::approx(8 * big + gpu.bwd + (gpu.iteration - 8 * (gpu.fwd + gpu.bwd))).epsilon(0.01));
  // The end of the iteration adds its time after everything else.
  const Run tail = simulate({0, 0.25});
  CHECK(tail.iteration - gpu.iteration == exasim::testing::approx(0.25).epsilon(1e-9));
  // The time split says where it went: the GPU waited for its host, not for other stages.
  CHECK(tail.host == exasim::testing::approx(0.25).epsilon(1e-9));
  CHECK(gpu.host == 0);
  CHECK(bound.host > 0.8 * bound.iteration);
  CHECK(bound.bubble < 0.05 * bound.iteration);
}

TEST_CASE("host overheads: read from a calibration file's training section, checked") {
  const models::Calibration c = models::apply_calibration(
      {}, config::load_string("{training: {micro_batch_overhead: 2 ms, iteration_overhead: 30 ms}}", "cal.yaml"));
  CHECK(c.host.micro_batch_s == exasim::testing::approx(2e-3));
  CHECK(c.host.iteration_s == exasim::testing::approx(30e-3));
  CHECK_THROWS_AS(models::apply_calibration({}, config::load_string("{training: {launch: 2 ms}}", "cal.yaml")), ConfigError);
  CHECK_THROWS_AS(models::apply_calibration({}, config::load_string("{training: {iteration_overhead: -1 ms}}", "cal.yaml")),
                  ConfigError);
}

// The host's dispatch of each MoE layer's local experts (models::HostOverheads::expert_dispatch_s)
// runs beside their kernels: hidden while the GPU is slower, the pace when the host is: then every
// layer pass costs local experts x the constant (forward) or twice that (backward).
TEST_CASE("host overheads: per-expert dispatch of MoE layers, beside the expert kernels") {
  ModelSpec m = testing::gpt(4, 1024, 16, 8);
  m.gated_mlp = true;
  m.moe = MoeSpec{8, 2, 0, 1024, 0};  // 8 experts of ffn 1024, top-2, every layer routed
  TrainingConfig cfg = testing::config(1, 1, 1, 4);
  cfg.parallelism.ep = 1;
  const topologies::Cluster cluster = testing::ideal_cluster(1, 1);
  const TrainingPlan plan(m, cfg, 1, 1);
  const models::KernelParams k = models::KernelParams::defaults_for(cluster.gpu);
  auto run = [&](double c) {
    models::HostOverheads h;
    h.expert_dispatch_s = c;
    return simulate_training({plan, cluster, k, {}, {}, {}, {}, h}).iteration_time_s;
  };
  const double gpu = run(0);
  // Far above the GPU's work: 4 micro-batches x 4 layers x (8 forward + 16 backward) dispatches.
  const double big = 10 * gpu;
  CHECK(run(big) == exasim::testing::approx(4 * 4 * 24 * big).epsilon(0.1));
  // Far below: hidden behind the expert kernels.
  CHECK(run(1e-9) == exasim::testing::approx(gpu).epsilon(1e-3));
  // The default is Megatron-Core + Transformer Engine's, fitted on a measured run (calibration_file.hpp).
  CHECK(models::HostOverheads{}.expert_dispatch_s == exasim::testing::approx(148e-6));
  CHECK(models::apply_calibration({}, config::load_string("{training: {expert_dispatch_overhead: 50 us}}", "c.yaml"))
            .host.expert_dispatch_s == exasim::testing::approx(50e-6));
}
