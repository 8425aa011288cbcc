#include "models/calibration/kernel_sample.hpp"

#include <algorithm>

namespace exasim::models {

KernelParams params_at(const KernelParams& p, SampleClocks clocks) {
  if (clocks == SampleClocks::kBurst) return p.at_burst_clocks();
  KernelParams q = p;
  if (clocks == SampleClocks::kSustained) q.sustained_load = true;
  return q;
}

std::size_t clocks_from_power(std::vector<KernelSample>& samples, double power_limit_w) {
  std::size_t at_limit = 0;
  if (!(power_limit_w > 0)) return 0;
  for (KernelSample& s : samples)
    if (s.clocks != SampleClocks::kSustained && s.power_w >= kAtPowerLimit * power_limit_w) {
      s.clocks = SampleClocks::kSustained;
      ++at_limit;
    }
  return at_limit;
}

double predict_sample(const hw::GpuSpec& gpu, const KernelParams& p, const KernelSample& s) {
  // The GEMM and FlashAttention models lower their clocks under the power limit.
  const bool limited = s.kind == SampleKind::kGemm || s.kind == SampleKind::kAttentionPrefill ||
                       s.kind == SampleKind::kMoeExperts;
  if (limited && s.clocks == SampleClocks::kBurst && p.sustained_clock_fraction < 1)
    return predict_sample(gpu, p.at_burst_clocks(), s);
  if (limited && s.clocks == SampleClocks::kSustained && !p.sustained_load)
    return predict_sample(gpu, params_at(p, SampleClocks::kSustained), s);
  const double launch = s.timing == SampleTiming::kLaunchIncluded ? p.host_launch_overhead_s : 0.0;
  if (s.kind == SampleKind::kGemm)
    return launch + gemm_op(gpu, p, {s.op, s.dtype, s.recipe, s.cast}, s.m, s.n, s.k, s.batch).time_s;
  if (s.mla && s.kind == SampleKind::kAttentionPrefill)
    return launch + mla_prefill(gpu, p, s.dtype, mla_prefill_shape(s.batch, s.seq, s.heads)).time_s;
  if (s.mla && s.kind == SampleKind::kAttentionDecode)
    return launch + mla_decode(gpu, p, s.dtype, mla_decode_shape(s.batch, s.context, s.heads)).time_s;
  if (s.kind == SampleKind::kAttentionPrefill) {
    AttentionShape a;
    a.batch = s.batch, a.seq_q = s.seq, a.heads = s.heads, a.kv_heads = s.kv_heads, a.head_dim = s.head_dim;
    a.window = s.window;
    // TensorRT-LLM's context op: QKV preprocessing (bf16 projection in), then the FMHA.
    return launch + qkv_preprocess(gpu, p, s.batch * s.seq, s.heads, s.kv_heads, s.head_dim, DType::kBf16, s.dtype, s.cache_dtype).time_s +
           attention_prefill(gpu, p, s.dtype, a).time_s;
  }
  if (s.kind == SampleKind::kAttentionDecode) {
    DecodeShape d;
    // A sliding window bounds the keys each step reads (the cache keeps only the window).
    d.batch = s.batch, d.context = s.window > 0 ? std::min(s.context, s.window) : s.context;
    d.heads = s.heads, d.kv_heads = s.kv_heads, d.head_dim = s.head_dim;
    return launch + qkv_preprocess(gpu, p, s.batch, s.heads, s.kv_heads, s.head_dim, DType::kBf16, DType::kBf16, s.cache_dtype).time_s +
           attention_decode(gpu, p, s.dtype, d).time_s;
  }
  if (s.kind == SampleKind::kMoeExperts)
    return launch + moe_experts_time(gpu, p, {"moe", s.dtype, s.recipe, s.cast}, s.moe).total.time_s;
  return launch + memory_op(gpu, p, s.memory_op, s.dtype, s.rows, s.cols).time_s;
}

double hbm_fraction(const hw::GpuSpec& gpu, const KernelSample& s) {
  if (!(s.time_s > 0)) return 0;
  double bytes = 0;
  if (s.kind == SampleKind::kAttentionDecode && s.mla) {
    const DecodeShape d = mla_decode_shape(s.batch, s.context, s.heads);
    bytes = s.batch * s.context * d.head_dim * dtype_bytes(s.dtype);  // one latent row per token
  } else if (s.kind == SampleKind::kAttentionDecode) {
    const double keys = s.window > 0 ? std::min(s.context, s.window) : s.context;
    bytes = s.batch * keys * s.kv_heads * s.head_dim * 2 * dtype_bytes(s.dtype);
  } else if (s.kind == SampleKind::kGemm) {
    const double a = s.cast != InputCast::kNone || s.recipe == GemmRecipe::kWeightOnly ? 2 : dtype_bytes(s.dtype);
    bytes = s.batch * (s.m * s.k * a + s.k * s.n * dtype_bytes(s.dtype));
  } else if (s.kind == SampleKind::kMoeExperts) {
    // Each expert a token reaches has its up and down weights read once.
    bytes = s.moe.load.active_experts * s.moe.hidden * s.moe.expert_ffn * (s.moe.gated ? 3 : 2) * dtype_bytes(s.dtype);
  }
  return bytes / s.time_s / gpu.hbm_bandwidth;
}

FasterThanHbm drop_faster_than_hbm(const hw::GpuSpec& gpu, std::vector<KernelSample>& samples) {
  FasterThanHbm n;
  std::erase_if(samples, [&](const KernelSample& s) {
    if (hbm_fraction(gpu, s) <= 1) return false;
    ++(s.kind == SampleKind::kGemm ? n.gemm : s.kind == SampleKind::kMoeExperts ? n.moe : n.decode);
    return true;
  });
  return n;
}

}  // namespace exasim::models
