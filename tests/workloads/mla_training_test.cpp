// Multi-head latent attention (DeepSeek-V2/V3) in training: the projections' GEMMs against the
// parameter count of the attention block, the tensor-parallel split (latent down-projections
// replicated, head up-projections split), FlashAttention's work with MLA's head widths, and a
// DeepSeek-V3-shaped MoE + MLA plan simulated end to end.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <string>

#include "hw/config/node.hpp"
#include "training_fixture.hpp"
#include "workloads/model/model_config.hpp"
#include "workloads/training/training_plan.hpp"
#include "workloads/training/training_simulation.hpp"
#include "workloads/training/model_flops.hpp"
#include "workloads/training/transformer_ops.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

ModelSpec deepseek_v3() { return resolve_model(config::load_string("deepseek-v3", "<test>"), testing::catalog(), "."); }

// FLOPs of the attention block's GEMMs (projections and output) in one forward.
double projection_flops(const LayerDims& d) {
  double f = 0;
  for (const Op& op : layer_forward(d))
    if (op.kind == OpKind::kGemm && (std::string(op.name).starts_with("mla.") || std::string(op.name) == "attn.out")) f += op.flops;
  return f;
}

TrainingConfig mla_config(int tp, int ep, int dp) {
  TrainingConfig c = testing::config(tp, 1, dp, dp);
  c.seq_len = 4096;
  c.parallelism.ep = ep;
  c.parallelism.sequence_parallel = tp > 1;
  return c;
}

}  // namespace

TEST_CASE("mla: the projections do 2 x tokens x the attention block's matmul parameters") {
  const ModelSpec m = deepseek_v3();
  REQUIRE(m.mla);
  const MlaSpec& a = *m.mla;
  const double h = 7168, heads = 128, T = 4096;
  // q_a 7168x1536, q_b 1536x(128x192), kv_a 7168x(512+64), kv_b 512x(128x256), o (128x128)x7168.
  const double matmul = h * 1536 + 1536 * heads * 192 + h * 576 + 512 * heads * 256 + heads * 128 * h;
  CHECK(a.q_lora_rank == 1536);
  const LayerDims d1 = LayerDims::from(m, mla_config(1, 8, 8)).for_layer(m, 5);
  CHECK(projection_flops(d1) == exasim::testing::approx(2 * T * matmul));
  // The norms on the latents are the only other attention parameters.
  CHECK(m.layer_base_parameter_count() - 2 * h == exasim::testing::approx(matmul + 1536 + 512));
  // TP 8: the down-projections run on every rank, the up-projections and the output split.
  const LayerDims d8 = LayerDims::from(m, mla_config(8, 8, 1)).for_layer(m, 5);
  const double replicated = h * 1536 + h * 576, split = matmul - replicated;
  CHECK(projection_flops(d8) == exasim::testing::approx(2 * T * (replicated + split / 8)));
}

TEST_CASE("mla: FlashAttention sees 128 heads of query-key width 192 and value width 128") {
  const ModelSpec m = deepseek_v3();
  const LayerDims d = LayerDims::from(m, mla_config(1, 8, 8)).for_layer(m, 5);
  double fwd = 0;
  for (const Op& op : layer_forward(d))
    if (op.kind == OpKind::kAttention) fwd += op.flops;
  // Causal: half of QK^T (width 192) and PV (width 128), 2 FLOPs per multiply-add.
  const double s = 4096;
  CHECK(fwd == exasim::testing::approx(0.5 * 2 * s * s * 128 * (192 + 128)));
  // The MFU formula counts the full score matrix with the same widths, and MLA's projections.
  const TrainingConfig c = mla_config(1, 8, 8);
  const double total = model_forward_flops(m, c);
  CHECK(total > 2 * s * 37e9);  // DeepSeek-V3 activates ~37 B parameters per token (report)
  CHECK(total < 2 * s * 40e9 + 61 * 2 * s * s * 128 * (192 + 128));
}

TEST_CASE("mla: a DeepSeek-V3-shaped plan (MLA + 256 experts, EP 8) simulates, and its backward costs about twice the forward") {
  ModelSpec m = deepseek_v3();
  m.layers = 4;  // 1 dense + 3 MoE layers of the real shape
  m.moe->dense_layers = 1;
  TrainingConfig c = mla_config(2, 8, 8);
  c.global_batch = 16;
  c.zero = 1;
  const topologies::Cluster cluster = testing::ideal_cluster(2, 8);
  const TrainingPlan plan(m, c, cluster.gpu_count(), 8);
  const TrainingResult r = simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}});
  CHECK(r.iteration_time_s > 0);
  double fwd = 0, bwd = 0;
  for (const auto& t : r.graph->graph.tasks()) {
    if (t.category == kForwardTask) fwd += t.duration;
    if (t.category == kBackwardTask) bwd += t.duration;
  }
  CHECK(bwd / fwd > 1.7);
  CHECK(bwd / fwd < 2.6);
  CHECK(r.mfu > 0.05);
  CHECK(r.mfu < 0.8);
}
