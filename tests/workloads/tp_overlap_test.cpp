// Tensor-parallel communication: without overlap every collective sits on the critical path,
// so one TP group's iteration is its kernels plus its collectives; with overlap each collective
// runs beside the kernels that produce it and the iteration approaches max(kernels, collectives).
// Beside a collective the kernels lose the SMs it holds (Transformer Engine's userbuffers: 16 for
// a reduce-scatter, 1 for an all-gather), so they take longer by at most that share of the overlap.
#include <doctest/doctest.h>

#include "training_fixture.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

struct Times {
  double iteration = 0, kernels = 0, collectives = 0;
};

Times run(bool overlap, const models::CollectiveParams& collective = {}) {
  const ModelSpec model = testing::gpt(8, 8192, 64);
  TrainingConfig cfg = testing::config(8, 1, 1, 4);
  cfg.parallelism.sequence_parallel = true;
  cfg.tp_comm_overlap = overlap;
  const topologies::Cluster cluster = testing::dgx_a100_node();
  const TrainingPlan plan(model, cfg, 8, 8);
  const TrainingResult r = simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), collective, {}});
  Times t;
  t.iteration = r.iteration_time_s;
  for (sim::TaskId id = 0; id < r.graph->graph.task_count(); ++id) {
    const auto& task = r.graph->graph.task(id);
    const double d = (*r.timeline)[id].end - (*r.timeline)[id].start;
    (task.kind == sim::TaskKind::kCompute ? t.kernels : t.collectives) += d;
  }
  return t;
}

}  // namespace

TEST_CASE("TP collectives add up without overlap and hide behind kernels with it") {
  const Times serial = run(false);
  const Times overlapped = run(true);
  // One stage, one replica: nothing else runs, so the serial iteration is the plain sum.
  CHECK(serial.iteration == doctest::Approx(serial.kernels + serial.collectives).epsilon(1e-6));
  CHECK(overlapped.iteration < serial.iteration - 0.5 * serial.collectives);
  CHECK(overlapped.iteration >= std::max(overlapped.kernels, overlapped.collectives) * (1 - 1e-9));
  // Kernels that share the GPU with the collectives' SMs: slower by 0 < x <= s/(1-s) of the
  // collectives' time, s = 16 of the A100's 108 SMs (the most any of them holds).
  const double s = 16.0 / 108;
  CHECK(overlapped.kernels > serial.kernels * (1 + 1e-6));
  CHECK(overlapped.kernels - serial.kernels <= s / (1 - s) * overlapped.collectives);
  // Collectives that hold no SMs leave the kernels as they were.
  models::CollectiveParams free;
  free.userbuffers_all_gather_sms = free.userbuffers_reduce_scatter_sms = free.collective_sms = free.p2p_sms = 0;
  CHECK(run(true, free).kernels == doctest::Approx(serial.kernels).epsilon(1e-9));
}
