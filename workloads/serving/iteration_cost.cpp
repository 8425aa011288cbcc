#include "workloads/serving/iteration_cost.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "models/collective/custom_all_reduce.hpp"
#include "models/collective/expert_all_to_all.hpp"
#include "models/kernel/kernel_models.hpp"
#include "models/kernel/moe_experts_model.hpp"

namespace exasim::workloads::serving {

namespace {

constexpr DType kAct = DType::kBf16;  // activations, norms and attention math run in bf16
constexpr double kActBytes = 2;
// Token counts up to this many are memoized (the largest iteration budgets in practice).
constexpr std::int64_t kCacheLimit = 1 << 16;

struct Dims {
  double h = 0, d = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0;
};

Dims per_gpu_dims(const ModelSpec& m, int tp) {
  Dims x;
  x.h = static_cast<double>(m.hidden);
  x.d = static_cast<double>(m.head_dimension());
  x.heads = static_cast<double>(m.heads) / tp;
  // Fewer KV heads than TP ranks: each rank keeps a replica of one KV head (vLLM, TRT-LLM).
  const int kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  x.kv_heads = std::max(1.0, static_cast<double>(kv) / tp);
  x.ffn = static_cast<double>(m.ffn) / tp;
  x.vocab = static_cast<double>(m.vocab) / tp;
  return x;
}

models::MlaDims mla_dims(const MlaSpec& a) {
  return {static_cast<double>(a.qk_nope_head_dim), static_cast<double>(a.qk_rope_head_dim),
          static_cast<double>(a.v_head_dim), static_cast<double>(a.kv_lora_rank)};
}

// Multi-head latent attention's projections over `tokens` tokens that prefill and decode share
// (vLLM's DeepseekV2MLAAttention, TensorRT-LLM's MLA module): the Q and KV down-projections,
// replicated on every TP rank and fused into one GEMM when Q has a latent, the RMSNorms of both
// latents, Q's up-projection and the output projection split by heads, and the rotary part of Q
// and of the one shared rotary key. K's and V's up-projection depends on the phase
// (mla_attention_time).
double mla_projection_time(const CostModelInputs& in, const MlaSpec& a, double tokens) {
  const hw::GpuSpec& g = in.gpu;
  const models::KernelParams& p = in.kernel;
  const DType w = in.precision;
  const Dims x = per_gpu_dims(in.model, in.parallelism.tp);
  const models::MlaDims m = mla_dims(a);
  const double q_lora = static_cast<double>(a.q_lora_rank), qk = m.nope + m.rope;
  using models::MemoryOp;
  double t = 0;
  if (q_lora > 0) {
    t += models::gemm_time(g, p, w, tokens, q_lora + m.kv_lora + m.rope, x.h).time_s;
    t += models::memory_op(g, p, MemoryOp::kRmsNorm, kAct, tokens, q_lora).time_s;
    t += models::gemm_time(g, p, w, tokens, x.heads * qk, q_lora).time_s;
  } else {  // DeepSeek-V2-Lite: a full-rank Q projection split by heads
    t += models::gemm_time(g, p, w, tokens, x.heads * qk, x.h).time_s;
    t += models::gemm_time(g, p, w, tokens, m.kv_lora + m.rope, x.h).time_s;
  }
  t += models::memory_op(g, p, MemoryOp::kRmsNorm, kAct, tokens, m.kv_lora).time_s;
  t += models::memory_op(g, p, MemoryOp::kRope, kAct, tokens, (x.heads + 1) * m.rope).time_s;
  t += models::gemm_time(g, p, w, tokens, x.h, x.heads * m.v).time_s;  // output
  return t;
}

// One MLA layer's attention as the engines run it (TensorRT-LLM, vLLM, SGLang). Prefill
// un-absorbed: the cached and new latents up-projected to per-head K (nope) and V, then MHA with
// Q, K of nope + rope and V of v (mla_prefill). Decode absorbed: each head's Q (nope part) taken
// into the latent space by K's up-projection (a GEMM batched over the heads), every head over the
// one cached latent row per token (mla_decode: the cache read once, whatever the heads), and the
// latent output taken back to V's head dimension. Speculative verification: the k + 1 query
// tokens of a sequence are further query rows over the same cache (FlashMLA's seqlen_q x heads).
double mla_attention_time(const CostModelInputs& in, const MlaSpec& a, const BatchShape& b, double window,
                          double decode_context) {
  const hw::GpuSpec& g = in.gpu;
  const models::KernelParams& p = in.kernel;
  const double heads = per_gpu_dims(in.model, in.parallelism.tp).heads;
  const models::MlaDims m = mla_dims(a);
  double t = 0;
  for (const PrefillChunk& c : b.prefills) {
    const double kv = c.context + c.tokens;
    t += models::gemm_time(g, p, in.precision, kv, heads * (m.nope + m.v), m.kv_lora).time_s;
    models::AttentionShape s = models::mla_prefill_shape(1, c.tokens, heads, m);
    s.seq_kv = kv, s.window = window;
    t += models::mla_prefill(g, p, in.kv_dtype, s).time_s;
  }
  if (b.decodes > 0) {
    const double q = in.speculative ? in.speculative->tokens + 1.0 : 1.0;
    const double rows = b.decodes * q;
    t += models::gemm_time(g, p, kAct, rows, m.kv_lora, m.nope, heads).time_s;  // Q_nope W_UK per head
    t += models::mla_decode(g, p, in.kv_dtype, models::mla_decode_shape(b.decodes, decode_context, heads * q, m)).time_s;
    t += models::gemm_time(g, p, kAct, rows, m.v, m.kv_lora, heads).time_s;  // latent output W_UV per head
  }
  return t;
}

}  // namespace

double BatchShape::tokens() const {
  double t = decodes;
  for (const PrefillChunk& c : prefills) t += c.tokens;
  return t;
}

IterationCostModel::IterationCostModel(CostModelInputs in) : in_(std::move(in)) {
  if (in_.speculative) {
    CostModelInputs d = in_;
    d.model = in_.speculative->draft;
    d.speculative = nullptr;
    d.cpu_overhead_s = 0;
    draft_ = std::make_unique<IterationCostModel>(std::move(d));
  }
}
IterationCostModel::~IterationCostModel() = default;
IterationCostModel::IterationCostModel(IterationCostModel&&) noexcept = default;
IterationCostModel& IterationCostModel::operator=(IterationCostModel&&) noexcept = default;

// GEMMs, norms and activations of one layer over `tokens` tokens on one GPU of the TP group.
double IterationCostModel::layer_linear_time(double tokens, bool moe_layer) const {
  const ModelSpec& m = in_.model;
  const hw::GpuSpec& g = in_.gpu;
  const models::KernelParams& p = in_.kernel;
  const DType w = in_.precision;
  const Dims x = per_gpu_dims(m, in_.parallelism.tp);
  const double T = tokens;
  using models::MemoryOp;
  double t = 0;
  // Serving engines fuse the residual add into the norm (vLLM fused_add_rms_norm): one kernel
  // reads x and the residual and writes both the new residual and the normed activations.
  t += 2 * models::streaming_kernel(g, p, 4 * T * x.h * kActBytes + x.h * kActBytes, 5 * T * x.h).time_s;
  if (m.mla) {
    t += mla_projection_time(in_, *m.mla, T);
  } else {
    t += models::gemm_time(g, p, w, T, (x.heads + 2 * x.kv_heads) * x.d, x.h).time_s;  // QKV
    if (m.position == PositionKind::kRope)
      t += models::memory_op(g, p, MemoryOp::kRope, kAct, T, (x.heads + x.kv_heads) * x.d).time_s;
    t += models::gemm_time(g, p, w, T, x.h, x.heads * x.d).time_s;  // attention output
  }
  const MemoryOp act = m.gated_mlp ? MemoryOp::kSiluMul : MemoryOp::kGelu;
  const double up = m.gated_mlp ? 2 : 1;
  if (!moe_layer) {
    t += models::gemm_time(g, p, w, T, up * x.ffn, x.h).time_s;
    t += models::memory_op(g, p, act, kAct, T, x.ffn).time_s;
    t += models::gemm_time(g, p, w, T, x.h, x.ffn).time_s;
    return t;
  }
  // MoE: router, shared experts (dense), and the routed experts as the engine's fused MoE op runs
  // them (moe_experts_model.hpp: top-k, permute, grouped GEMMs over the experts at least one
  // token visits, finalize), the picks uniform over the experts. Experts are split over ep ranks
  // and each expert's FFN over the tp/ep ranks that share it.
  const MoeSpec& moe = *m.moe;
  const int tp = in_.parallelism.tp, ep = in_.parallelism.ep;
  const double expert_ffn = static_cast<double>(moe.expert_ffn > 0 ? moe.expert_ffn : m.ffn) / (tp / ep);
  t += models::gemm_time(g, p, kAct, T, moe.experts, x.h).time_s;  // router logits
  if (moe.shared_experts > 0) {
    const double f = moe.shared_experts * expert_ffn;
    t += models::gemm_time(g, p, w, T, up * f, x.h).time_s;
    t += models::memory_op(g, p, act, kAct, T, f).time_s;
    t += models::gemm_time(g, p, w, T, x.h, f).time_s;
  }
  models::MoeExpertsShape experts;
  experts.tokens = T, experts.hidden = x.h, experts.expert_ffn = expert_ffn, experts.top_k = moe.top_k;
  experts.experts = moe.experts, experts.gated = m.gated_mlp;
  experts.load = models::busiest_rank_experts({models::ExpertRoutingKind::kUniform, 0}, T, moe.top_k, moe.experts, ep);
  const models::GemmFormat format{"", w, models::GemmRecipe::kDense, models::InputCast::kNone};
  return t + models::moe_experts_time(g, p, format, experts).total.time_s;
}

std::vector<models::ExpertAllToAllKey> expert_exchange_keys(MoeAllToAll kind, DType precision, bool decode_only) {
  using K = models::ExpertAllToAllKernel;
  using Ph = models::ExpertAllToAllPhase;
  using F = models::ExpertPayload;
  if (kind == MoeAllToAll::kDeepEp) {  // fp8 dispatch, bf16 combine, as measured
    const K k = decode_only ? K::kDeepEpLowLatency : K::kDeepEpNormal;
    return {{k, Ph::kDispatch, F::kFp8}, {k, Ph::kCombine, F::kBf16}};
  }
  if (kind == MoeAllToAll::kNvlinkTwoSided) {  // TensorRT-LLM dispatches in the MoE's quantized format
    const F f = precision == DType::kFp8 ? F::kFp8 : precision == DType::kFp4 ? F::kNvfp4 : F::kBf16;
    return {{K::kNvlinkTwoSided, Ph::kPrepare, F::kBf16}, {K::kNvlinkTwoSided, Ph::kDispatch, f},
            {K::kNvlinkTwoSided, Ph::kCombine, F::kBf16}};
  }
  return {};
}

double IterationCostModel::expert_exchange_time(double tokens, bool decode_only) const {
  const ModelSpec& m = in_.model;
  const int ep = in_.parallelism.ep;
  const auto keys = expert_exchange_keys(in_.moe_all_to_all, in_.precision, decode_only);
  // Each rank routes its share of the iteration's tokens, on DeepEP's default SMs.
  const models::ExpertExchange x{tokens / ep, static_cast<int>(m.hidden), m.moe->top_k, m.moe->experts, ep,
                                 models::kDeepEpDefaultSms};
  double t = 0;
  for (const models::ExpertAllToAllKey& key : keys) {
    const auto c = in_.collective.expert_all_to_all.find(key);
    if (c == in_.collective.expert_all_to_all.end())
      throw std::logic_error("expert all-to-all constants missing: " + models::expert_all_to_all_key_name(key));
    t += models::expert_all_to_all_time(key, x, in_.gpu.sm_count, c->second);
  }
  return t;
}

// Collectives of one layer: all-reduces after attention and MLP (TP), or the MoE token dispatch
// and combine (NCCL all-to-alls, or the expert all-to-all kernels) when experts are spread over ep
// ranks.
double IterationCostModel::layer_comm_time(double tokens, bool moe_layer, bool decode_only) const {
  const int tp = in_.parallelism.tp, ep = in_.parallelism.ep;
  const double h = static_cast<double>(in_.model.hidden);
  auto coll = [&](models::Collective op, double bytes, int ranks) {
    if (ranks <= 1 || bytes <= 0) return 0.0;
    const models::GroupShape shape{ranks, std::min(ranks, std::max(1, in_.gpus_per_node))};
    const double nccl = models::collective_cost(op, bytes, shape, in_.links, in_.collective).time_s;
    // Inside a node the engine's own all-reduce where it is faster (custom_all_reduce.hpp).
    if (op != models::Collective::kAllReduce || shape.nodes() > 1) return nccl;
    return models::engine_all_reduce_time(nccl, bytes, ranks, in_.links.intra_bandwidth, in_.collective);
  };
  double t = coll(models::Collective::kAllReduce, tokens * h * kActBytes, tp);
  if (moe_layer && ep > 1 && in_.moe_all_to_all != MoeAllToAll::kNccl) {
    t += expert_exchange_time(tokens, decode_only);
  } else if (moe_layer && ep > 1) {
    const double per_rank = tokens * in_.model.moe->top_k * h * kActBytes / ep;
    t += 2 * coll(models::Collective::kAllToAll, per_rank, ep);
  } else {
    t += coll(models::Collective::kAllReduce, tokens * h * kActBytes, tp);
  }
  return t;
}

double IterationCostModel::head_time(double sampled) const {
  if (sampled <= 0) return 0;
  const Dims x = per_gpu_dims(in_.model, in_.parallelism.tp);
  const hw::GpuSpec& g = in_.gpu;
  double t = models::memory_op(g, in_.kernel, models::MemoryOp::kRmsNorm, kAct, sampled, x.h).time_s;
  t += models::gemm_time(g, in_.kernel, kAct, sampled, x.vocab, x.h).time_s;  // LM head kept in 16 bit
  const int tp = in_.parallelism.tp;
  if (tp > 1) {
    const models::GroupShape shape{tp, std::min(tp, std::max(1, in_.gpus_per_node))};
    t += models::collective_cost(models::Collective::kAllGather, sampled * x.vocab * tp * kActBytes, shape, in_.links,
                                 in_.collective).time_s;
  }
  return t;
}

double IterationCostModel::cached_linear(std::int64_t tokens, bool decode_only) const {
  // Only DeepEP's two kernels make a decode-only iteration's linear time differ.
  decode_only = decode_only && in_.moe_all_to_all == MoeAllToAll::kDeepEp;
  std::vector<double>& cache = decode_only ? decode_linear_cache_ : linear_cache_;
  const bool cacheable = tokens < kCacheLimit;
  if (cacheable && static_cast<std::size_t>(tokens) < cache.size() && !std::isnan(cache[static_cast<std::size_t>(tokens)]))
    return cache[static_cast<std::size_t>(tokens)];
  const ModelSpec& m = in_.model;
  const double T = static_cast<double>(tokens);
  const int dense = m.moe ? std::min(m.moe->dense_layers, m.layers) : m.layers;
  const int moe_layers = m.layers - dense;
  double t = dense * (layer_linear_time(T, false) + layer_comm_time(T, false, decode_only));
  if (moe_layers > 0) t += moe_layers * (layer_linear_time(T, true) + layer_comm_time(T, true, decode_only));
  t += models::memory_op(in_.gpu, in_.kernel, models::MemoryOp::kEmbedding, kAct, T, static_cast<double>(m.hidden)).time_s;
  const int pp = in_.parallelism.pp;
  if (pp > 1) {  // activations handed from stage to stage
    const int per_node = std::max(1, in_.gpus_per_node);
    const models::GroupShape shape{2, in_.parallelism.tp * 2 <= per_node ? 2 : 1};
    t += (pp - 1) * models::collective_cost(models::Collective::kSendRecv, T * static_cast<double>(m.hidden) * kActBytes,
                                            shape, in_.links, in_.collective).time_s;
  }
  if (cacheable) {
    const auto i = static_cast<std::size_t>(tokens);
    if (cache.size() <= i) cache.resize(std::max(i + 1, cache.size() * 2), std::nan(""));
    cache[i] = t;
  }
  return t;
}

double IterationCostModel::linear_time(double tokens, double sampled, bool decode_only) const {
  if (tokens <= 0) return 0;
  return cached_linear(static_cast<std::int64_t>(std::llround(tokens)), decode_only) + head_time(sampled);
}

double IterationCostModel::attention_time(const BatchShape& b) const {
  const ModelSpec& m = in_.model;
  // Sliding-window layers (model.sliding_window): prefill over the band, decode over at most the
  // window's tokens; the other layers attend to the whole context.
  const int sliding = m.sliding_layers();
  double t = (m.layers - sliding) * layer_attention_time(b, 0);
  if (sliding > 0) t += sliding * layer_attention_time(b, static_cast<double>(m.sliding_window));
  return t;
}

double IterationCostModel::layer_attention_time(const BatchShape& b, double window) const {
  const ModelSpec& m = in_.model;
  const Dims x = per_gpu_dims(m, in_.parallelism.tp);
  const hw::GpuSpec& g = in_.gpu;
  const auto decode_context = [&] {
    const double sum = window > 0 && b.decode_window_context >= 0 ? b.decode_window_context : b.decode_context;
    return window > 0 ? std::min(sum / b.decodes, window) : sum / b.decodes;
  };
  if (m.mla) return mla_attention_time(in_, *m.mla, b, window, b.decodes > 0 ? decode_context() : 0);
  double t = 0;
  for (const PrefillChunk& c : b.prefills) {
    models::AttentionShape s{1, c.tokens, c.context + c.tokens, x.heads, x.kv_heads, x.d, true};
    s.window = window;
    t += models::attention_prefill(g, in_.kernel, kAct, s).time_s;
  }
  if (b.decodes > 0) {
    const double context = decode_context();
    if (in_.speculative) {  // verification: k+1 query tokens per sequence over its context
      const double q = in_.speculative->tokens + 1;
      models::AttentionShape s{b.decodes, q, std::max(q, context), x.heads, x.kv_heads, x.d, true};
      s.window = window;
      t += models::attention_prefill(g, in_.kernel, kAct, s).time_s;
    } else {
      // decode_attention: matrix is the tensor-core GQA decode the kernel tables measured (a KV
      // head's query group as the rows of one MMA per loaded K/V block); vector, CUDA-core paged
      // attention (each query head's dot products on the vector units).
      models::DecodeShape s{b.decodes, context, x.heads, x.kv_heads, x.d, 16};
      s.kernels = in_.decode_attention_matrix ? models::DecodeKernels::kTensorRtLlm : models::DecodeKernels::kCudaCorePaged;
      t += models::attention_decode(g, in_.kernel, in_.kv_dtype, s).time_s;
    }
  }
  return t;
}

IterationTime IterationCostModel::time(const BatchShape& b) const {
  IterationTime r;
  const double per_decode = in_.speculative ? in_.speculative->tokens + 1.0 : 1.0;
  double prefill_tokens = 0;
  for (const PrefillChunk& c : b.prefills) prefill_tokens += c.tokens;
  const double tokens = prefill_tokens + b.decodes * per_decode;
  r.linear = linear_time(tokens, b.sampled, prefill_tokens == 0);
  r.attention = attention_time(b);
  if (draft_ && (b.decodes > 0 || prefill_tokens > 0)) {
    // The draft model keeps its own KV: it prefills the same chunks and runs k decode steps.
    BatchShape prefill_only;
    prefill_only.prefills = b.prefills;
    r.draft = draft_->linear_time(prefill_tokens, 0) + draft_->attention_time(prefill_only);
    if (b.decodes > 0)
      r.draft += in_.speculative->tokens * draft_->decode_step_time(b.decodes, b.decode_context / b.decodes);
  }
  if (b.swap_bytes > 0 && in_.host_link_bandwidth > 0) r.swap = b.swap_bytes / in_.host_link_bandwidth;
  r.cpu = in_.cpu_overhead_s;
  r.total = r.linear + r.attention + r.draft + r.swap + r.cpu;
  return r;
}

double IterationCostModel::prefill_time(double prompt_tokens) const {
  BatchShape b;
  b.prefills.push_back({prompt_tokens, 0});
  b.sampled = 1;
  return time(b).total;
}

double IterationCostModel::decode_step_time(double batch, double context) const {
  BatchShape b;
  b.decodes = batch;
  b.decode_context = batch * context;
  b.decode_window_context = in_.model.sliding_window > 0 ? batch * std::min(context, static_cast<double>(in_.model.sliding_window))
                                                         : b.decode_context;
  b.sampled = batch;
  return time(b).total;
}

}  // namespace exasim::workloads::serving
