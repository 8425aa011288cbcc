// Gradient all-reduce overlapped with the backward pass holds the SMs of NCCL's channels
// (models::CollectiveParams::collective_sms), so the backward's kernels run on the rest while it
// does: the kernels' total time grows by exactly the SM share x the time they overlapped it.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <string>

#include "training_fixture.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

struct Run {
  double iteration = 0, kernels = 0, overlap = 0;
};

Run ddp(double collective_sms) {
  const topologies::Cluster cluster = testing::dgx_a100_node();
  TrainingConfig cfg = testing::config(1, 1, 8, 16);
  cfg.overlap_grad_reduce = true;
  const TrainingPlan plan(testing::gpt(8, 4096, 32), cfg, 8, 8);
  models::CollectiveParams collective;
  collective.collective_sms = collective_sms;
  const TrainingResult r = simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), collective, {}});
  Run out;
  out.iteration = r.iteration_time_s;
  const sim::ExecGraph& g = r.graph->graph;
  for (sim::TaskId k = 0; k < g.task_count(); ++k) {
    if (g.task(k).kind != sim::TaskKind::kCompute) continue;
    const auto& rk = (*r.timeline)[k];
    out.kernels += rk.end - rk.start;
    for (sim::TaskId c = 0; c < g.task_count(); ++c) {
      if (g.task(c).kind != sim::TaskKind::kCollective) continue;
      const auto& rc = (*r.timeline)[c];
      out.overlap += std::max(0.0, std::min(rk.end, rc.end) - std::max(rk.start, rc.start));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("DDP: kernels beside the gradient all-reduce lose NCCL's SMs for as long as they overlap it") {
  const Run free = ddp(0), held = ddp(16);
  MESSAGE("kernels " << free.kernels << " s -> " << held.kernels << " s; overlapped " << held.overlap << " s");
  REQUIRE(held.overlap > 0.01 * held.kernels);   // the buckets do run beside the backward
  CHECK(free.overlap > 0);
  // One collective at a time on one GPU: the work lost is 16 of the A100's 108 SMs' share of
  // every second overlapped, and the kernels end that much later.
  CHECK(held.kernels - free.kernels == exasim::testing::approx(16.0 / 108 * held.overlap).epsilon(1e-6));
  CHECK(held.iteration > free.iteration);
  CHECK(held.iteration - free.iteration <= held.kernels - free.kernels + 1e-12);
}
