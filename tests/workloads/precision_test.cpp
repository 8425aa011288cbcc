// fp8 training: GEMMs run at the fp8 rate, but every GEMM's activation operand is cast first, so
// an iteration speeds up by less than the 2x of the peak rates; on a GPU without fp8 units the
// simulator falls back to the next rate it has and fp8 cannot be faster. Only the GEMMs that
// Transformer Engine wraps are fp8 (and cast): the LM head, the MoE router and an unfused
// attention core's batched matmuls stay 16-bit.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "models/kernel/kernel_models.hpp"
#include "workloads/model/model_config.hpp"
#include "training_fixture.hpp"
#include "workloads/training/transformer_ops.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

double iteration(const std::string& gpu, DType precision) {
  const ModelSpec model = testing::gpt(8, 8192, 64);
  TrainingConfig cfg = testing::config(1, 1, 1, 4);
  cfg.precision = precision;
  topologies::Cluster cluster = testing::ideal_cluster(1, 1);
  cluster.gpu = testing::catalog().gpu(gpu);
  cluster.gpu.hbm_capacity_bytes = 1e15;  // this test is about speed, not fitting
  const TrainingPlan plan(model, cfg, 1, 1);
  return simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}}).iteration_time_s;
}

}  // namespace

TEST_CASE("fp8 GEMMs speed up a compute-bound iteration by less than the peak ratio") {
  const double bf16 = iteration("H100-SXM5-80GB", DType::kBf16);
  const double fp8 = iteration("H100-SXM5-80GB", DType::kFp8);
  CHECK(fp8 < 0.9 * bf16);
  CHECK(fp8 > 0.5 * bf16);
}

TEST_CASE("the unfused cross entropy moves the logits' bytes of each PyTorch pass") {
  // Megatron-LM's vocab-parallel cross entropy over x = T x V/t logits of e bytes: fp32 copy
  // (e + 4), max (4), subtract (8), exp (8), sum (4), divide (8) forward; scale in place (8) and
  // cast back (4 + e) backward: x (e + 36) + x (12 + e). The fused kernel: one pass each way.
  ModelSpec model = testing::gpt(2, 2048, 16);
  model.vocab = 131072;
  model.max_seq_len = 4096;
  TrainingConfig cfg = testing::config(2, 1, 1, 1);
  cfg.seq_len = 4096;
  auto loss_bytes = [&](bool fused) {
    cfg.fused_cross_entropy = fused;
    const LayerDims d = LayerDims::from(model, cfg);
    double bytes = 0;
    for (const auto& ops : {head_forward(d), head_backward(d)})
      for (const Op& op : ops)
        if (op.name.starts_with("cross_entropy")) {
          bytes += op.memory_op ? models::memory_op_traffic(*op.memory_op, d.act_dtype, op.rows, op.cols).bytes : op.bytes;
        }
    return bytes;
  };
  const double x = 4096.0 * 131072 / 2, e = 2;
  CHECK(loss_bytes(false) == exasim::testing::approx(x * (e + 36) + x * (12 + e)));
  CHECK(loss_bytes(true) == exasim::testing::approx(x * (e + 12) + x * (4 + e)));
  // On an H100 the unfused loss costs a 1.7B-class model (hidden 2048, vocab 128k) time: the
  // iteration is slower by at least the extra bytes at the HBM's datasheet rate.
  topologies::Cluster cluster = testing::ideal_cluster(1, 2);
  cluster.gpu = testing::catalog().gpu("H100-SXM5-80GB");
  auto time = [&](bool fused) {
    cfg.fused_cross_entropy = fused;
    const TrainingPlan plan(model, cfg, 2, 2);
    return simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}}).iteration_time_s;
  };
  CHECK(time(false) - time(true) > (loss_bytes(false) - loss_bytes(true)) / cluster.gpu.hbm_bandwidth);
}

namespace {

// Elements cast to fp8 by the ops' fp8_cast kernels (each moves 5 B per element: read 2, write 1,
// amax read 2), and the names of the GEMMs that stay 16-bit.
double cast_elements(const std::vector<Op>& ops) {
  double bytes = 0;
  for (const Op& op : ops)
    if (op.name == "fp8_cast") bytes += op.bytes;
  return bytes / 5;
}

std::vector<std::string> sixteen_bit_gemms(const std::vector<Op>& ops) {
  std::vector<std::string> names;
  for (const Op& op : ops)
    if (op.kind == OpKind::kGemm && op.activation_precision) names.emplace_back(op.name);
  return names;
}

}  // namespace

TEST_CASE("fp8: the routed experts' grouped GEMMs cast their tokens, the router and the LM head stay 16-bit") {
  // Mixtral 8x7B (h 4096, 8 experts, top-2, expert ffn 14336), ep 4: 2 local experts, one grouped
  // GEMM each way. Forward casts: QKV and output projection inputs (T x h each, 32 x 128 = h
  // context), the experts' up input (T x top_k x h) and down input (T x top_k x ffn).
  const ModelSpec m = resolve_model(config::load_string("mixtral-8x7b", "<test>"), testing::catalog(), ".");
  TrainingConfig cfg = testing::config(1, 1, 4, 4);
  cfg.seq_len = 4096;
  cfg.parallelism.ep = 4;
  cfg.precision = DType::kFp8;
  const LayerDims d = LayerDims::from(m, cfg).for_layer(m, 0);
  REQUIRE(d.moe);
  const double T = 4096, h = 4096, routed = T * 2, F = 14336;
  CHECK(cast_elements(layer_forward(d)) == exasim::testing::approx(T * h + T * h + routed * h + routed * F));
  CHECK(sixteen_bit_gemms(layer_forward(d)) == std::vector<std::string>{"moe.router"});
  // Backward: each GEMM's incoming gradient for the input gradient and again (transposed) for the
  // weight gradient: dense QKV (T x 6144 with 8 KV heads), output (T x h); experts' down (routed x
  // h) and up (routed x 2 ffn, gated).
  CHECK(cast_elements(layer_backward(d)) ==
        exasim::testing::approx(2 * (T * 6144 + T * h + routed * h + routed * 2 * F)));
  CHECK(sixteen_bit_gemms(layer_backward(d)) == std::vector<std::string>{"moe.router_dgrad", "moe.router_wgrad"});
  // Megatron-Core's output layer is not a Transformer Engine module: no casts, 16-bit GEMMs.
  CHECK(cast_elements(head_forward(d)) == 0);
  CHECK(cast_elements(head_backward(d)) == 0);
  CHECK(sixteen_bit_gemms(head_backward(d)) == std::vector<std::string>{"logits_dgrad", "logits_wgrad"});
}

TEST_CASE("fp8: an unfused attention core's batched matmuls run in 16 bits, uncast") {
  const ModelSpec model = testing::gpt(2, 2048, 16);
  TrainingConfig cfg = testing::config(1, 1, 1, 1);
  cfg.precision = DType::kFp8;
  cfg.attention = AttentionKernel::kUnfused;
  const LayerDims d = LayerDims::from(model, cfg);
  REQUIRE(!d.flash);
  CHECK(sixteen_bit_gemms(layer_forward(d)) == std::vector<std::string>{"attn.qk", "attn.av"});
  const double T = cfg.seq_len, h = 2048;  // QKV (T x h), output (T x h), MLP up (T x h), down (T x 4h)
  CHECK(cast_elements(layer_forward(d)) == exasim::testing::approx(3 * T * h + T * 4 * h));
}
