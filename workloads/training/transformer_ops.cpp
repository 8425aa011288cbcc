#include "workloads/training/transformer_ops.hpp"

#include "models/kernel/attention_model.hpp"
#include "workloads/training/moe_ops.hpp"
#include "workloads/training/op_builders.hpp"

#include <algorithm>
#include <optional>

namespace exasim::workloads {

using namespace op_builders;

namespace {

// fp8 training (Transformer Engine recipe): before each GEMM of a layer that Transformer Engine
// wraps (its linear layers, and the grouped GEMMs of the routed experts, whose tokens it casts
// expert by expert) the activation operand is cast from 16-bit to fp8 with a per-tensor scale:
// read 2 B, write 1 B per element, and an amax reduction (counted as a second read). Weights are
// cast once per iteration (not here). GEMMs outside Transformer Engine stay 16-bit (sixteen_bit).
std::vector<Op> with_fp8_casts(std::vector<Op> ops, const LayerDims& d) {
  if (!d.fp8) return ops;
  std::vector<Op> out;
  out.reserve(ops.size() * 2);
  for (Op& op : ops) {
    if (op.kind == OpKind::kGemm && !op.activation_precision) {
      const double elements = op.m * op.k * op.batch;
      out.push_back(memory("fp8_cast", elements * (2 + 1 + 2), elements));
    }
    out.push_back(op);
  }
  return out;
}

models::MemoryOp norm(const LayerDims& d, bool backward) {
  if (d.rms_norm) return backward ? models::MemoryOp::kRmsNormBackward : models::MemoryOp::kRmsNorm;
  return backward ? models::MemoryOp::kLayerNormBackward : models::MemoryOp::kLayerNorm;
}

// FlashAttention over the micro-batch's sequences; FLOPs and bytes as the kernel model counts
// them (causal: the visible half of the score matrix).
// Under context parallelism (ring attention with Megatron's load-balanced split: each GPU holds
// chunks i and 2cp-1-i of every sequence) each GPU's s/cp queries see, over the ring's cp steps,
// half of the s keys on average: the work of a non-causal attention of s/cp queries over s/2 keys.
Op attention(std::string_view name, const LayerDims& d, bool backward) {
  Op op;
  op.name = name;
  op.kind = OpKind::kAttention;
  op.backward = backward;
  const double e = d.act_bytes, s = d.seq, b = d.micro_batch;
  const bool ring = d.cp > 1;
  const double seq_q = s / d.cp, seq_kv = ring ? s / 2 : s;
  op.attention = {b, seq_q, seq_kv, d.heads, d.kv_heads, d.head_dim, !ring && d.causal_fraction < 1};
  double fwd_flops = 4 * b * seq_q * seq_kv * d.heads * d.head_dim * (ring ? 1 : d.causal_fraction);
  if (d.window > 0 && d.window < s) {  // a sliding window (TrainingPlan refuses it with cp > 1)
    op.attention.window = d.window;
    op.attention.causal = true;
    fwd_flops = 4 * b * models::band_pairs(s, d.window) * d.heads * d.head_dim;
  }
  // Every K/V block of the sequence passes through each GPU of the ring once.
  const double q = d.tokens * d.heads * d.head_dim * e, kv = d.tokens * d.cp * d.kv_heads * d.head_dim * e;
  op.flops = backward ? 2.5 * fwd_flops : fwd_flops;
  op.bytes = backward ? 5 * q + 4 * kv : 2 * q + 2 * kv;  // fwd: Q, K, V in, O out; bwd: + O, dO, dQ, dK, dV
  return op;
}

void tp_comm(std::vector<Op>& ops, std::string_view name, sim::CommKind kind, double bytes, int tp) {
  group_comm(ops, name, kind, bytes, CommGroup::kTensor, tp);
}

// The K/V exchange of ring attention over the cp group: cp - 1 steps that pass each GPU's K and V
// slice on, the volume of an all-gather of the whole sequence's K and V (`bytes`). Transformer
// Engine overlaps each step with the attention of the block at hand.
void cp_comm(std::vector<Op>& ops, std::string_view name, sim::CommKind kind, const LayerDims& d) {
  group_comm(ops, name, kind, 2 * d.micro_batch * d.seq * d.kv_heads * d.head_dim * d.act_bytes, CommGroup::kContext, d.cp);
}

// Megatron's "g" operator at the end of a TP block: all-reduce, or reduce-scatter under SP.
sim::CommKind block_exit(const LayerDims& d) { return d.sp ? sim::CommKind::kReduceScatter : sim::CommKind::kAllReduce; }

void attention_core_forward(std::vector<Op>& ops, const LayerDims& d) {
  const double e = d.act_bytes, s = d.seq, b = d.micro_batch, a = d.heads, hd = d.head_dim;
  if (d.flash) {
    ops.push_back(attention("attn.flash_fwd", d, false));
    cp_comm(ops, "cp.kv_ring", sim::CommKind::kAllGather, d);
    return;
  }
  const double scores = b * a * s * s;
  ops.push_back(sixteen_bit(gemm("attn.qk", s, s, hd, e, b * a)));
  ops.push_back(memory("attn.softmax", models::MemoryOp::kSoftmax, d, b * a * s, s));
  ops.push_back(memory("attn.dropout", scores * (2 * e + 1)));
  ops.push_back(sixteen_bit(gemm("attn.av", s, hd, s, e, b * a)));
}

void attention_core_backward(std::vector<Op>& ops, const LayerDims& d) {
  const double e = d.act_bytes, s = d.seq, b = d.micro_batch, a = d.heads, hd = d.head_dim;
  if (d.flash) {
    // FlashAttention backward recomputes the scores: 5 matmuls against the forward's 2.
    ops.push_back(attention("attn.flash_bwd", d, true));
    cp_comm(ops, "cp.kv_ring_bwd", sim::CommKind::kAllGather, d);     // K and V again
    cp_comm(ops, "cp.dkv_ring_bwd", sim::CommKind::kReduceScatter, d);  // dK and dV back to their owners
    return;
  }
  const double scores = b * a * s * s;
  ops.push_back(sixteen_bit(gemm("attn.av_dprobs", s, s, hd, e, b * a)));
  ops.push_back(sixteen_bit(gemm("attn.av_dv", s, hd, s, e, b * a)));
  ops.push_back(memory("attn.dropout_bwd", scores * (2 * e + 1)));
  ops.push_back(memory("attn.softmax_bwd", models::MemoryOp::kSoftmaxBackward, d, b * a * s, s));
  ops.push_back(sixteen_bit(gemm("attn.qk_dq", s, hd, s, e, b * a)));
  ops.push_back(sixteen_bit(gemm("attn.qk_dk", s, hd, s, e, b * a)));
}

}  // namespace

LayerDims LayerDims::from(const ModelSpec& model, const TrainingConfig& cfg) {
  LayerDims d;
  const int t = cfg.parallelism.tp;
  d.seq = cfg.seq_len;
  d.micro_batch = cfg.micro_batch;
  d.cp = cfg.parallelism.cp;
  d.tokens = d.seq * d.micro_batch / d.cp;
  d.hidden = static_cast<double>(model.hidden);
  d.heads = static_cast<double>(model.heads) / t;
  // Fewer KV heads than TP ranks: Megatron replicates each KV head on several ranks.
  d.kv_heads = std::max(1.0, static_cast<double>(model.kv_heads > 0 ? model.kv_heads : model.heads) / t);
  d.head_dim = static_cast<double>(model.head_dimension());
  d.ffn = static_cast<double>(model.ffn) / t;
  d.vocab = static_cast<double>(model.vocab) / t;
  d.act_bytes = (cfg.precision == DType::kFp32 || cfg.precision == DType::kTf32) ? 4 : 2;
  d.act_dtype = d.act_bytes == 4 ? DType::kFp32 : DType::kBf16;
  d.tp = t;
  d.sp = cfg.parallelism.sequence_parallel && t > 1;
  d.tp_async_backward = cfg.tp_backward_overlap && !cfg.tp_comm_overlap && t > 1;
  d.tp_userbuffers = cfg.tp_comm_overlap && d.sp;
  d.gated = model.gated_mlp;
  d.rope = model.position == PositionKind::kRope;
  d.rms_norm = model.norm == NormKind::kRmsNorm;
  d.flash = cfg.attention == AttentionKernel::kFlash;
  d.fp8 = cfg.precision == DType::kFp8;
  d.fused_cross_entropy = cfg.fused_cross_entropy;
  d.ep = cfg.parallelism.ep;
  d.etp = cfg.parallelism.etp;
  if (model.mla) {
    const MlaSpec& a = *model.mla;
    d.mla = true;
    d.q_lora = static_cast<double>(a.q_lora_rank), d.kv_lora = static_cast<double>(a.kv_lora_rank);
    d.qk_rope = static_cast<double>(a.qk_rope_head_dim), d.qk_nope = static_cast<double>(a.qk_nope_head_dim);
    d.v_head = static_cast<double>(a.v_head_dim);
    d.kv_heads = d.heads;  // every head gets its own K and V from the shared latent
    d.head_dim = (d.qk_nope + d.qk_rope + d.v_head) / 2;
  }
  d.balance = {cfg.moe_load_imbalance, cfg.moe_routing.get(), cfg.moe_capacity_factor, cfg.moe_pad_to_capacity};
  d.lora = cfg.lora;
  return d;
}

LayerDims LayerDims::for_layer(const ModelSpec& model, int layer) const {
  LayerDims d = *this;
  d.window = static_cast<double>(model.attention_window(layer));
  d.moe = model.is_moe_layer(layer);
  if (!d.moe) return d;
  const MoeSpec& m = *model.moe;
  d.experts = m.experts;
  d.top_k = m.top_k;
  d.expert_ffn = static_cast<double>(m.expert_ffn > 0 ? m.expert_ffn : model.ffn);
  d.shared_experts = m.shared_experts;
  d.imbalance = busiest_rank_load(d.balance, layer, m.experts, d.ep);
  return d;
}

// Multi-head latent attention's projections (DeepSeek-V3; Megatron-Core's MLA layer): the
// down-projections to the Q and KV latents are replicated on every TP rank, the up-projections
// split the heads; decoupled RoPE on qk_rope dims of each query head and one shared key.
void mla_projections_forward(std::vector<Op>& ops, const LayerDims& d) {
  const double e = d.act_bytes, T = d.tokens, h = d.hidden, qk = d.qk_nope + d.qk_rope;
  if (d.q_lora > 0) {
    ops.push_back(gemm("mla.q_down", T, d.q_lora, h, e));
    ops.push_back(memory("mla.q_norm", models::MemoryOp::kRmsNorm, d, T, d.q_lora));
    ops.push_back(gemm("mla.q_up", T, d.heads * qk, d.q_lora, e));
  } else {
    ops.push_back(gemm("mla.q", T, d.heads * qk, h, e));
  }
  ops.push_back(gemm("mla.kv_down", T, d.kv_lora + d.qk_rope, h, e));
  ops.push_back(memory("mla.kv_norm", models::MemoryOp::kRmsNorm, d, T, d.kv_lora));
  ops.push_back(gemm("mla.kv_up", T, d.heads * (d.qk_nope + d.v_head), d.kv_lora, e));
  ops.push_back(memory("rope", models::MemoryOp::kRope, d, T, (d.heads + 1) * d.qk_rope));
}

void mla_projections_backward(std::vector<Op>& ops, const LayerDims& d) {
  const double e = d.act_bytes, T = d.tokens, h = d.hidden, qk = d.qk_nope + d.qk_rope;
  const double kv_up = d.heads * (d.qk_nope + d.v_head);
  ops.push_back(memory("rope_bwd", models::MemoryOp::kRopeBackward, d, T, (d.heads + 1) * d.qk_rope));
  ops.push_back(gemm("mla.kv_up_dgrad", T, d.kv_lora, kv_up, e));
  ops.push_back(weight_gradient("mla.kv_up_wgrad", kv_up, d.kv_lora, T, e));
  ops.push_back(memory("mla.kv_norm_bwd", models::MemoryOp::kRmsNormBackward, d, T, d.kv_lora));
  ops.push_back(gemm("mla.kv_down_dgrad", T, h, d.kv_lora + d.qk_rope, e));
  ops.push_back(weight_gradient("mla.kv_down_wgrad", d.kv_lora + d.qk_rope, h, T, e));
  if (d.q_lora > 0) {
    ops.push_back(gemm("mla.q_up_dgrad", T, d.q_lora, d.heads * qk, e));
    ops.push_back(weight_gradient("mla.q_up_wgrad", d.heads * qk, d.q_lora, T, e));
    ops.push_back(memory("mla.q_norm_bwd", models::MemoryOp::kRmsNormBackward, d, T, d.q_lora));
    ops.push_back(gemm("mla.q_down_dgrad", T, h, d.q_lora, e));
    ops.push_back(weight_gradient("mla.q_down_wgrad", d.q_lora, h, T, e));
  } else {
    ops.push_back(gemm("mla.q_dgrad", T, h, d.heads * qk, e));
    ops.push_back(weight_gradient("mla.q_wgrad", d.heads * qk, h, T, e));
  }
}

// Transformer Engine's userbuffers overlap a TP collective with its GEMM by splitting the GEMM
// along M (transformer_engine/pytorch/module/base.py, initialize_ub defaults): a ring exchange
// of tp steps for the all-gather before QKV and FC1 (and before the dgrad of the output
// projections in the backward), a pipeline of 4 splits for the reduce-scatter after the output
// projections. Each chunk is a GEMM of its own, with the wave quantization of m / chunks rows.
Op chunked(Op op, const LayerDims& d, int chunks) {
  if (d.tp_userbuffers) op.chunks = chunks;
  return op;
}
constexpr int kPipelineSplits = 4;

// The GEMMs of a LoRA adapter, by the linear layer it adapts.
struct Adapter {
  std::string_view a, b, b_wgrad, b_dgrad, a_dgrad, a_wgrad;
};
constexpr Adapter kQkvAdapter{"lora.qkv_a", "lora.qkv_b", "lora.qkv_b_wgrad", "lora.qkv_b_dgrad", "lora.qkv_a_dgrad", "lora.qkv_a_wgrad"};
constexpr Adapter kAttnOutAdapter{"lora.attn_out_a", "lora.attn_out_b", "lora.attn_out_b_wgrad", "lora.attn_out_b_dgrad",
                                  "lora.attn_out_a_dgrad", "lora.attn_out_a_wgrad"};
constexpr Adapter kMlpUpAdapter{"lora.mlp_up_a", "lora.mlp_up_b", "lora.mlp_up_b_wgrad", "lora.mlp_up_b_dgrad",
                                "lora.mlp_up_a_dgrad", "lora.mlp_up_a_wgrad"};
constexpr Adapter kMlpDownAdapter{"lora.mlp_down_a", "lora.mlp_down_b", "lora.mlp_down_b_wgrad", "lora.mlp_down_b_dgrad",
                                  "lora.mlp_down_a_dgrad", "lora.mlp_down_a_wgrad"};

// A LoRA adapter beside a linear layer of (per GPU) `in` inputs and `out` outputs: x A (in x r),
// then (x A) B (r x out), added to the layer's output.
void adapter_forward(std::vector<Op>& ops, const LayerDims& d, const Adapter& n, double in, double out) {
  ops.push_back(sixteen_bit(gemm(n.a, d.tokens, d.lora->rank, in, d.act_bytes)));
  ops.push_back(sixteen_bit(gemm(n.b, d.tokens, out, d.lora->rank, d.act_bytes)));
}

// Its backward: dB = (x A)^T dY and dZ = dY B^T, then the input gradient dZ A^T (which adds to
// the frozen layer's), pushed here; returned, dA = x^T dZ, which needs the layer's input.
Op adapter_backward(std::vector<Op>& ops, const LayerDims& d, const Adapter& n, double in, double out) {
  const double e = d.act_bytes, T = d.tokens, r = d.lora->rank;
  ops.push_back(sixteen_bit(weight_gradient(n.b_wgrad, out, r, T, e)));
  ops.push_back(sixteen_bit(gemm(n.b_dgrad, T, r, out, e)));
  ops.push_back(sixteen_bit(gemm(n.a_dgrad, T, in, r, e)));
  return sixteen_bit(weight_gradient(n.a_wgrad, r, in, T, e));
}

// A row-parallel layer's adapter backward, all of it ahead of the layer's input gradient.
void row_parallel_adapter_backward(std::vector<Op>& ops, const LayerDims& d, const Adapter& n, double in, double out) {
  ops.push_back(adapter_backward(ops, d, n, in, out));
}

std::vector<Op> layer_forward(const LayerDims& d) {
  const double e = d.act_bytes, T = d.tokens, Tr = d.replicated_tokens(), h = d.hidden;
  const double qkv = (d.heads + 2 * d.kv_heads) * d.head_dim;
  const double up = d.ffn * (d.gated ? 2 : 1);
  const double ctx = d.heads * (d.mla ? d.v_head : d.head_dim);
  std::vector<Op> ops;
  ops.push_back(memory("ln1", norm(d, false), d, Tr, h));
  if (d.sp) tp_comm(ops, "tp.allgather_attn", sim::CommKind::kAllGather, T * h * e, d.tp);
  if (d.mla) {
    mla_projections_forward(ops, d);
  } else {
    ops.push_back(chunked(gemm("qkv", T, qkv, h, e), d, d.tp));
    if (d.lora && d.lora->qkv) adapter_forward(ops, d, kQkvAdapter, h, qkv);
    if (d.rope) ops.push_back(memory("rope", models::MemoryOp::kRope, d, T, (d.heads + d.kv_heads) * d.head_dim));
  }
  attention_core_forward(ops, d);
  ops.push_back(chunked(gemm("attn.out", T, h, ctx, e), d, kPipelineSplits));
  if (d.lora && d.lora->attn_out) adapter_forward(ops, d, kAttnOutAdapter, ctx, h);
  tp_comm(ops, d.sp ? "tp.reducescatter_attn" : "tp.allreduce_attn", block_exit(d), T * h * e, d.tp);
  ops.push_back(memory("dropout_add1", Tr * h * (3 * e + 1)));
  ops.push_back(memory("ln2", norm(d, false), d, Tr, h));
  if (d.moe) {
    moe_forward(ops, d);
  } else {
    if (d.sp) tp_comm(ops, "tp.allgather_mlp", sim::CommKind::kAllGather, T * h * e, d.tp);
    ops.push_back(chunked(gemm("mlp.up", T, up, h, e), d, d.tp));
    if (d.lora && d.lora->mlp_up) adapter_forward(ops, d, kMlpUpAdapter, h, up);
    ops.push_back(memory("mlp.act", d.gated ? models::MemoryOp::kSiluMul : models::MemoryOp::kGelu, d, T, d.ffn));
    ops.push_back(chunked(gemm("mlp.down", T, h, d.ffn, e), d, kPipelineSplits));
    if (d.lora && d.lora->mlp_down) adapter_forward(ops, d, kMlpDownAdapter, d.ffn, h);
    tp_comm(ops, d.sp ? "tp.reducescatter_mlp" : "tp.allreduce_mlp", block_exit(d), T * h * e, d.tp);
  }
  ops.push_back(memory("dropout_add2", Tr * h * (3 * e + 1)));
  return with_fp8_casts(std::move(ops), d);
}

// What takes a column-parallel layer's weight-gradient place: its own dW, or when frozen (LoRA)
// its adapter's dA after the adapter's other backward GEMMs (pushed here, ahead of the layer's
// input gradient), or nothing without an adapter.
std::optional<Op> weight_gradient_place(std::vector<Op>& ops, const LayerDims& d, bool adapted, const Adapter& n,
                                        double in, double out, Op weight_grad) {
  if (!d.frozen()) return weight_grad;
  if (!adapted) return std::nullopt;
  return adapter_backward(ops, d, n, in, out);
}

// The backward of a column-parallel linear layer (QKV, MLP up): input-gradient and weight-gradient
// GEMMs, then the input gradient's all-reduce (reduce-scatter under SP). With Megatron-LM's
// asynchronous TP communication (LinearWithGradAccumulationAndAsyncCommunication), and with
// Transformer Engine's userbuffers (their "bulk" overlaps), the SP all-gather of the layer's input,
// which the forward did not keep, runs beside the input-gradient GEMM and the reduction beside the
// weight-gradient GEMM.
//
// A frozen layer (LoRA) has no weight gradient: with an adapter, the adapter's dA (which needs the
// same gathered input) takes its place; without one, the reduction follows the input gradient.
void column_parallel_backward(std::vector<Op>& ops, const LayerDims& d, Op dgrad, std::optional<Op> wgrad,
                              std::string_view gather, std::string_view reduce) {
  const double bytes = d.tokens * d.hidden * d.act_bytes;
  if (!wgrad) {
    ops.push_back(dgrad);
    tp_comm(ops, reduce, block_exit(d), bytes, d.tp);
    return;
  }
  if (!d.tp_async_backward && !d.tp_userbuffers) {
    ops.push_back(dgrad);
    ops.push_back(*wgrad);
    tp_comm(ops, reduce, block_exit(d), bytes, d.tp);
    return;
  }
  dgrad.own_task = true;
  ops.push_back(dgrad);
  if (d.sp) {
    tp_comm(ops, gather, sim::CommKind::kAllGather, bytes, d.tp);
    ops.back().async = true;
  }
  wgrad->own_task = true;
  ops.push_back(*wgrad);
  tp_comm(ops, reduce, block_exit(d), bytes, d.tp);
  ops.back().async = true;
}

std::vector<Op> layer_backward(const LayerDims& d) {
  const double e = d.act_bytes, T = d.tokens, Tr = d.replicated_tokens(), h = d.hidden;
  const double qkv = (d.heads + 2 * d.kv_heads) * d.head_dim;
  const double up = d.ffn * (d.gated ? 2 : 1);
  const double ctx = d.heads * (d.mla ? d.v_head : d.head_dim);
  std::vector<Op> ops;
  ops.push_back(memory("dropout_add2_bwd", Tr * h * (2 * e + 1)));
  if (d.moe) {
    moe_backward(ops, d);
  } else {
    if (d.sp) tp_comm(ops, "tp.allgather_mlp_bwd", sim::CommKind::kAllGather, T * h * e, d.tp);
    if (d.lora && d.lora->mlp_down) row_parallel_adapter_backward(ops, d, kMlpDownAdapter, d.ffn, h);
    ops.push_back(chunked(gemm("mlp.down_dgrad", T, d.ffn, h, e), d, d.tp));
    if (!d.frozen()) ops.push_back(weight_gradient("mlp.down_wgrad", h, d.ffn, T, e));
    ops.push_back(memory("mlp.act_bwd", d.gated ? models::MemoryOp::kSiluMulBackward : models::MemoryOp::kGeluBackward,
                         d, T, d.ffn));
    column_parallel_backward(ops, d, gemm("mlp.up_dgrad", T, h, up, e),
                             weight_gradient_place(ops, d, d.lora && d.lora->mlp_up, kMlpUpAdapter, h, up,
                                                   weight_gradient("mlp.up_wgrad", up, h, T, e)),
                             "tp.allgather_mlp_input_bwd", d.sp ? "tp.reducescatter_mlp_bwd" : "tp.allreduce_mlp_bwd");
  }
  ops.push_back(memory("ln2_bwd", norm(d, true), d, Tr, h));
  ops.push_back(memory("dropout_add1_bwd", Tr * h * (2 * e + 1)));
  if (d.sp) tp_comm(ops, "tp.allgather_attn_bwd", sim::CommKind::kAllGather, T * h * e, d.tp);
  if (d.lora && d.lora->attn_out) row_parallel_adapter_backward(ops, d, kAttnOutAdapter, ctx, h);
  ops.push_back(chunked(gemm("attn.out_dgrad", T, ctx, h, e), d, d.tp));
  if (!d.frozen()) ops.push_back(weight_gradient("attn.out_wgrad", ctx, h, T, e));
  attention_core_backward(ops, d);
  if (d.mla) {  // several projections: their reductions stay synchronous
    mla_projections_backward(ops, d);
    tp_comm(ops, d.sp ? "tp.reducescatter_attn_bwd" : "tp.allreduce_attn_bwd", block_exit(d), T * h * e, d.tp);
  } else {
    if (d.rope) ops.push_back(memory("rope_bwd", models::MemoryOp::kRopeBackward, d, T, (d.heads + d.kv_heads) * d.head_dim));
    column_parallel_backward(ops, d, gemm("qkv_dgrad", T, h, qkv, e),
                             weight_gradient_place(ops, d, d.lora && d.lora->qkv, kQkvAdapter, h, qkv,
                                                   weight_gradient("qkv_wgrad", qkv, h, T, e)),
                             "tp.allgather_attn_input_bwd", d.sp ? "tp.reducescatter_attn_bwd" : "tp.allreduce_attn_bwd");
  }
  ops.push_back(memory("ln1_bwd", norm(d, true), d, Tr, h));
  return with_fp8_casts(std::move(ops), d);
}

std::vector<Op> layer_recompute(const LayerDims& d, models::Recompute policy) {
  std::vector<Op> ops;
  if (policy == models::Recompute::kFull) return layer_forward(d);
  // Selective recompute re-runs the attention core; a flash kernel's backward already does.
  if (policy == models::Recompute::kSelective && !d.flash) attention_core_forward(ops, d);
  return ops;
}

std::vector<Op> embedding_forward(const LayerDims& d) {
  const double e = d.act_bytes, T = d.tokens, Tr = d.replicated_tokens(), h = d.hidden;
  std::vector<Op> ops;
  ops.push_back(memory("embedding", models::MemoryOp::kEmbedding, d, T, h));
  // Vocabulary-parallel embedding: each rank fills the rows of its vocabulary shard.
  tp_comm(ops, d.sp ? "tp.reducescatter_embedding" : "tp.allreduce_embedding", block_exit(d), T * h * e, d.tp);
  if (!d.rope) ops.push_back(memory("position_add_dropout", Tr * h * (3 * e + 1)));
  return ops;
}

std::vector<Op> embedding_backward(const LayerDims& d) {
  const double e = d.act_bytes, T = d.tokens, h = d.hidden;
  std::vector<Op> ops;
  if (d.sp) tp_comm(ops, "tp.allgather_embedding_bwd", sim::CommKind::kAllGather, T * h * e, d.tp);
  if (!d.frozen()) ops.push_back(memory("embedding_bwd", models::MemoryOp::kEmbeddingBackward, d, T, h));  // fp32 scatter-add
  return ops;
}

std::vector<Op> head_forward(const LayerDims& d) {
  const double e = d.act_bytes, T = d.tokens, Tr = d.replicated_tokens(), h = d.hidden;
  std::vector<Op> ops;
  ops.push_back(memory("final_norm", norm(d, false), d, Tr, h));
  if (d.sp) tp_comm(ops, "tp.allgather_head", sim::CommKind::kAllGather, T * h * e, d.tp);
  ops.push_back(sixteen_bit(gemm("logits", T, d.vocab, h, e)));
  // Vocabulary-parallel cross entropy in fp32: max, sum of exponentials, target logit.
  if (d.fused_cross_entropy) {
    ops.push_back(memory("cross_entropy", models::MemoryOp::kCrossEntropy, d, T, d.vocab));
  } else {  // Megatron-LM's PyTorch ops, each a pass over the T x V/t logits (x elements)
    const double x = T * d.vocab;
    ops.push_back(memory("cross_entropy.float", x * (e + 4)));  // fp32 copy of the logits
    ops.push_back(memory("cross_entropy.max", x * 4, x));       // row max
    ops.push_back(memory("cross_entropy.sub", x * 8, x));       // minus the max, in place
    ops.push_back(memory("cross_entropy.exp", x * 8, x));       // in place
    ops.push_back(memory("cross_entropy.sum", x * 4, x));       // row sum
    ops.push_back(memory("cross_entropy.div", x * 8, x));       // softmax kept for the backward
  }
  tp_comm(ops, "tp.allreduce_loss", sim::CommKind::kAllReduce, 3 * T * 4, d.tp);
  return with_fp8_casts(std::move(ops), d);
}

std::vector<Op> head_backward(const LayerDims& d) {
  const double e = d.act_bytes, T = d.tokens, Tr = d.replicated_tokens(), h = d.hidden;
  std::vector<Op> ops;
  if (d.fused_cross_entropy) {
    ops.push_back(memory("cross_entropy_bwd", models::MemoryOp::kCrossEntropyBackward, d, T, d.vocab));
  } else {  // the saved softmax scaled by the loss gradient in place, then cast for the GEMMs
    const double x = T * d.vocab;
    ops.push_back(memory("cross_entropy_bwd.mul", x * 8, x));
    ops.push_back(memory("cross_entropy_bwd.cast", x * (4 + e)));
  }
  ops.push_back(sixteen_bit(gemm("logits_dgrad", T, h, d.vocab, e)));
  if (!d.frozen()) ops.push_back(sixteen_bit(weight_gradient("logits_wgrad", d.vocab, h, T, e)));
  tp_comm(ops, d.sp ? "tp.reducescatter_head_bwd" : "tp.allreduce_head_bwd", block_exit(d), T * h * e, d.tp);
  ops.push_back(memory("final_norm_bwd", norm(d, true), d, Tr, h));
  return with_fp8_casts(std::move(ops), d);
}

}  // namespace exasim::workloads
