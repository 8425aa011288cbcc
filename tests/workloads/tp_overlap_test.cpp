// Tensor-parallel communication: without overlap every collective sits on the critical path,
// so one TP group's iteration is its kernels plus its collectives; with overlap each collective
// runs beside the kernels that produce it and the iteration approaches max(kernels, collectives).
// Beside a collective the kernels lose the SMs it holds (Transformer Engine's userbuffers: 16 for
// a reduce-scatter, 1 for an all-gather), so they take longer by at most that share of the overlap;
// and the GEMMs beside one run in chunks along M, each with its own wave quantization.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <string>

#include "models/kernel/kernel_models.hpp"
#include "training_fixture.hpp"
#include "hw/error.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

struct Times {
  double iteration = 0, kernels = 0, collectives = 0;
};

// One TP group of 8 on a DGX A100 node: `layers` 8192-wide GPT layers under `cfg` (tp 8).
TrainingResult simulate_tp8(int layers, const TrainingConfig& cfg, const models::CollectiveParams& collective) {
  const topologies::Cluster cluster = testing::dgx_a100_node();
  const TrainingPlan plan(testing::gpt(layers, 8192, 64), cfg, 8, 8);
  return simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), collective, {}});
}

Times run(bool overlap, const models::CollectiveParams& collective = {}) {
  TrainingConfig cfg = testing::config(8, 1, 1, 4);
  cfg.parallelism.sequence_parallel = true;
  cfg.tp_comm_overlap = overlap;
  const TrainingResult r = simulate_tp8(8, cfg, collective);
  Times t;
  t.iteration = r.iteration_time_s;
  for (sim::TaskId id = 0; id < r.graph->graph.task_count(); ++id) {
    const auto& task = r.graph->graph.task(id);
    const double d = (*r.timeline)[id].end - (*r.timeline)[id].start;
    (task.kind == sim::TaskKind::kCompute ? t.kernels : t.collectives) += d;
  }
  return t;
}

// What Transformer Engine's userbuffers cost the GEMMs of run(): each GEMM beside an overlapped
// collective runs as chunks of m / c rows (c = tp for the ring-exchange all-gathers before QKV and
// FC1 and before the backward's output-projection dgrads, 4 for the pipelined reduce-scatters
// after the output projections): c t(m / c) - t(m) per GEMM, 8 layers x 4 micro-batches.
double chunked_gemm_penalty() {
  const topologies::Cluster cluster = testing::dgx_a100_node();
  models::KernelParams p = models::KernelParams::defaults_for(cluster.gpu);
  p.sustained_load = true;  // as training runs its kernels (build_training_graph)
  const double T = 2048, h = 8192, t = 8;
  struct Shape {
    double n, k;
    int chunks;
  };
  const Shape shapes[] = {{3 * h / t, h, 8}, {h, h / t, 4}, {4 * h / t, h, 8}, {h, 4 * h / t, 4},  // forward
                          {h / t, h, 8}, {4 * h / t, h, 8}};                                       // dgrads
  double extra = 0;
  for (const Shape& s : shapes) {
    const double whole = models::gemm_time(cluster.gpu, p, DType::kBf16, T, s.n, s.k).time_s;
    const double part = models::gemm_time(cluster.gpu, p, DType::kBf16, T / s.chunks, s.n, s.k).time_s;
    extra += s.chunks * part - whole;
  }
  return 8 * 4 * extra;
}

}  // namespace

TEST_CASE("TP collectives add up without overlap and hide behind kernels with it") {
  const Times serial = run(false);
  const Times overlapped = run(true);
  // One stage, one replica: nothing else runs, so the serial iteration is the plain sum.
  CHECK(serial.iteration == exasim::testing::approx(serial.kernels + serial.collectives).epsilon(1e-6));
  // Userbuffers split each overlapped GEMM along M (chunked_gemm_penalty): at least half of the
  // collectives' time hides behind the kernels, less what the split costs them.
  const double chunking = chunked_gemm_penalty();
  CHECK(chunking > 0);
  CHECK(overlapped.iteration < serial.iteration - 0.5 * serial.collectives + chunking);
  CHECK(overlapped.iteration >= std::max(overlapped.kernels, overlapped.collectives) * (1 - 1e-9));
  // Collectives that hold no SMs leave the kernels otherwise as they were.
  models::CollectiveParams free;
  free.userbuffers_all_gather_sms = free.userbuffers_reduce_scatter_sms = free.collective_sms = free.p2p_sms = 0;
  CHECK(run(true, free).kernels == exasim::testing::approx(serial.kernels + chunking).epsilon(1e-9));
  // Kernels that share the GPU with the collectives' SMs: slower still, by 0 < x <= s/(1-s) of the
  // collectives' time, s = 16 of the A100's 108 SMs (the most any of them holds).
  const double s = 16.0 / 108;
  CHECK(overlapped.kernels > (serial.kernels + chunking) * (1 + 1e-6));
  CHECK(overlapped.kernels - serial.kernels - chunking <= s / (1 - s) * overlapped.collectives);
}

namespace {

struct AsyncRun {
  double iteration = 0;
  double hidden_candidates = 0;   // backward reductions of the column-parallel layers
  double input_gathers = 0;       // SP re-gathers of their inputs (async mode only)
  double wgrads = 0;              // the weight-gradient kernels they may hide behind
  int tp_collectives = 0;
};

AsyncRun run_async(bool async, bool sp) {
  TrainingConfig cfg = testing::config(8, 1, 1, 2);
  cfg.parallelism.sequence_parallel = sp;
  cfg.tp_backward_overlap = async;
  models::CollectiveParams coll;
  coll.collective_sms = 0;  // the closed form below has no SM sharing
  const TrainingResult r = simulate_tp8(4, cfg, coll);
  AsyncRun out;
  out.iteration = r.iteration_time_s;
  const auto& g = r.graph->graph;
  for (sim::TaskId id = 0; id < g.task_count(); ++id) {
    const std::string label(g.label_of(id));
    const double d = (*r.timeline)[id].end - (*r.timeline)[id].start;
    if (g.task(id).category == kTensorCommTask) ++out.tp_collectives;
    for (const char* name : {"tp.allreduce_mlp_bwd", "tp.allreduce_attn_bwd", "tp.reducescatter_mlp_bwd", "tp.reducescatter_attn_bwd"})
      if (label.find(name) != std::string::npos) out.hidden_candidates += d;
    if (label.find("_input_bwd") != std::string::npos) out.input_gathers += d;
    if (label.find("qkv_wgrad") != std::string::npos || label.find("mlp.up_wgrad") != std::string::npos) out.wgrads += d;
  }
  return out;
}

}  // namespace

// Megatron-LM's asynchronous TP communication in the backward pass (tp_comm_overlap: backward):
// a column-parallel layer's input-gradient reduction runs beside its weight-gradient GEMM, and
// under SP the re-gather of its input beside the input-gradient GEMM. With GEMMs longer than the
// collectives (8192-wide layers on NVLink), the iteration loses exactly the two reductions per
// layer and micro-batch; the gathers SP adds are hidden.
TEST_CASE("asynchronous backward TP communication hides the column-parallel reductions") {
  for (bool sp : {false, true}) {
    CAPTURE(sp);
    const AsyncRun sync = run_async(false, sp), async = run_async(true, sp);
    REQUIRE(sync.hidden_candidates > 0);
    CHECK(sync.input_gathers == 0);
    // Each reduction is shorter than the GEMM it hides behind (4 layers x 2 micro-batches x 2).
    CHECK(async.wgrads / 16 > async.hidden_candidates / 16);
    CHECK(sync.iteration - async.iteration == exasim::testing::approx(sync.hidden_candidates).epsilon(0.02));
    if (sp) {  // two more all-gathers per layer and micro-batch, none of them on the critical path
      CHECK(async.tp_collectives == sync.tp_collectives + 2 * 4 * 2);
      CHECK(async.input_gathers > 0);
    } else {
      CHECK(async.tp_collectives == sync.tp_collectives);
    }
  }
}

TEST_CASE("tp_comm_overlap reads true, false and backward, and names the choices otherwise") {
  const auto training = [](const std::string& extra) {
    return read_training(config::load_string("{seq_len: 4096, global_batch: 8, " + extra + "}", "tp.yaml"), 8);
  };
  CHECK(training("tp_comm_overlap: true").tp_comm_overlap);
  CHECK_FALSE(training("tp_comm_overlap: true").tp_backward_overlap);
  CHECK_FALSE(training("tp_comm_overlap: false").tp_comm_overlap);
  const TrainingConfig b = training("tp_comm_overlap: backward");
  CHECK(b.tp_backward_overlap);
  CHECK_FALSE(b.tp_comm_overlap);
  CHECK_THROWS_WITH_AS(training("tp_comm_overlap: forward"), doctest::Contains("expected true, false or backward"), ConfigError);
}

// Transformer Engine's userbuffers pipeline a reduce-scatter with the GEMM that produces it and an
// all-gather with the GEMM that consumes it (ring exchange, the local shard first): each starts
// with its GEMM, not earlier beside other kernels (the lowering once let them start as soon as
// their input existed, hiding the MLP's all-gather behind the attention of the same layer).
TEST_CASE("tp_comm_overlap: each TP collective starts with the GEMM it is pipelined with") {
  TrainingConfig cfg = testing::config(8, 1, 1, 2);
  cfg.parallelism.sequence_parallel = true;
  cfg.tp_comm_overlap = true;
  const TrainingResult r = simulate_tp8(2, cfg, {});
  const sim::ExecGraph& g = r.graph->graph;
  const sim::Timeline& tl = *r.timeline;
  // The GEMM each forward collective runs beside.
  const std::pair<const char*, const char*> pairs[] = {{"tp.allgather_attn", "qkv"}, {"tp.reducescatter_attn", "attn.out"},
                                                       {"tp.allgather_mlp", "mlp.up"}, {"tp.reducescatter_mlp", "mlp.down"}};
  // The GEMM begins its segment (the short kernels after it may be merged: "fwd L0 qkv..attn.flash_fwd").
  auto starts_with_gemm = [](const std::string& label, const std::string& gemm) {
    return label == gemm || label.starts_with(gemm + "..");
  };
  int checked = 0;
  for (sim::TaskId c = 0; c < g.task_count(); ++c) {
    const std::string label(g.label_of(c));
    for (const auto& [collective, gemm] : pairs) {
      if (!label.ends_with(std::string(" ") + collective)) continue;
      const std::string layer = label.substr(0, label.size() - std::string(collective).size());  // "fwd L1 "
      // The kernel with the GEMM's label on the same device that starts closest to the collective.
      double nearest = 1e30;
      for (sim::TaskId k = 0; k < g.task_count(); ++k)
        if (g.task(k).kind == sim::TaskKind::kCompute && starts_with_gemm(std::string(g.label_of(k)), layer + gemm) &&
            g.streams()[g.task(k).stream].device == g.streams()[g.task(c).stream].device)
          nearest = std::min(nearest, std::abs(tl[k].start - tl[c].start));
      INFO(label);
      CHECK(nearest < 1e-12);
      ++checked;
    }
  }
  CHECK(checked == 2 * 2 * 4);  // 2 layers x 2 micro-batches x 4 collectives (one GPU of the symmetric group)
}
