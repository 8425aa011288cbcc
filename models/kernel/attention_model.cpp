#include "models/kernel/attention_model.hpp"

#include "models/cpu/cpu_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace exasim::models {

namespace {

struct Resolved {
  double batch, seq_q, seq_kv, heads, kv_heads, hd;
  double vd;  // V's head dimension (hd unless the shape says otherwise)
  bool causal;
  double window;  // keys per query under a sliding window (causal); infinity: none
};

Resolved resolve(const AttentionShape& s) {
  Resolved r;
  r.batch = std::max(1.0, s.batch);
  r.seq_q = std::max(1.0, s.seq_q);
  r.seq_kv = std::max(r.seq_q, s.seq_kv > 0 ? s.seq_kv : s.seq_q);
  r.heads = std::max(1.0, s.heads);
  r.kv_heads = std::clamp(s.kv_heads > 0 ? s.kv_heads : r.heads, 1.0, r.heads);
  // FlashAttention compiles head dims in steps of 32 (32, 64, ..., 256): others run padded.
  r.hd = std::ceil(std::max(1.0, s.head_dim) / 32) * 32;
  r.vd = s.value_dim > 0 ? std::ceil(s.value_dim / 32) * 32 : r.hd;
  r.window = s.window > 0 ? std::max(1.0, s.window) : std::numeric_limits<double>::infinity();
  r.causal = s.causal || s.window > 0;
  return r;
}

double matrix_rate_per_sm(const hw::GpuSpec& gpu, DType t) {
  if (gpu.supports(t) && t != DType::kFp32) return gpu.matrix_flops_per_sm(t);
  const double half = std::max(gpu.peak(DType::kBf16), gpu.peak(DType::kFp16));
  return (half > 0 ? half : gpu.peak(DType::kFp32)) / gpu.sm_count;
}

// Useful FLOPs of QK^T and PV: 2 (d_qk + d_v) per (query, visible key) pair.
double useful_flops(const Resolved& r) {
  const double offset = r.seq_kv - r.seq_q;  // queries are the last seq_q positions
  double pairs = r.causal ? r.seq_q * offset + r.seq_q * (r.seq_q + 1) / 2 : r.seq_q * r.seq_kv;
  if (std::isfinite(r.window)) pairs = band_pairs(r.seq_kv, r.window) - band_pairs(offset, r.window);
  return 2 * r.batch * r.heads * (r.hd + r.vd) * pairs;
}

// Tiles visited by the CTAs of one (sequence, head): total and the longest CTA. `outer` is the
// tile along the CTA's own axis, `inner` the tile it walks. Forward: outer = query rows.
struct Walk {
  double total = 0, longest = 0, ctas = 0;
};

Walk forward_walk(const Resolved& r, const AttentionTiles& t) {
  Walk w;
  const double nk = std::ceil(r.seq_kv / t.cols);
  w.ctas = std::ceil(r.seq_q / t.rows);
  if (!r.causal) {
    w.total = w.ctas * nk, w.longest = nk;
    return w;
  }
  const double offset = r.seq_kv - r.seq_q;
  for (double i = 0; i < w.ctas; ++i) {
    const double last_row = std::min(r.seq_q, (i + 1) * t.rows) + offset;  // one past the block's last query
    const double first_key = std::max(0.0, i * t.rows + offset - r.window + 1);  // 0 without a window
    const double visited = std::min(nk, std::ceil(last_row / t.cols)) - std::floor(first_key / t.cols);
    w.total += visited;
    w.longest = std::max(w.longest, visited);
  }
  return w;
}

// Backward: a CTA per key column block walks the query row blocks at or below the diagonal.
Walk backward_walk(const Resolved& r, const AttentionTiles& t) {
  Walk w;
  const double nq = std::ceil(r.seq_q / t.rows);
  w.ctas = std::ceil(r.seq_kv / t.cols);
  if (!r.causal) {
    w.total = w.ctas * nq, w.longest = nq;
    return w;
  }
  const double offset = r.seq_kv - r.seq_q;
  for (double j = 0; j < w.ctas; ++j) {
    const double first_key = j * t.cols - offset;  // first query row that sees this block
    const double first_block = std::max(0.0, std::floor(first_key / t.rows));
    // Under a sliding window the block's last key is seen by the queries up to window - 1 after it.
    const double last_query = std::min(r.seq_q - 1, (j + 1) * t.cols - 1 + r.window - 1 - offset);
    const double end_block = std::isfinite(r.window) ? std::floor(std::max(-1.0, last_query) / t.rows) + 1 : nq;
    const double visited = std::max(0.0, std::min(nq, end_block) - first_block);
    w.total += visited;
    w.longest = std::max(w.longest, visited);
  }
  return w;
}

// The on-chip terms (t_matrix, t_l2) at burst clocks run under the power limit, as a GEMM's do.
KernelCost finish(const KernelParams& p, double fixed, double t_matrix, double t_l2, double t_hbm, double flops,
                  double bytes) {
  KernelCost c;
  c.flops = flops;
  c.bytes = bytes;
  double t = t_matrix;
  c.bound = Bound::kMatrix;
  if (t_l2 > t) t = t_l2, c.bound = Bound::kSmemL2;
  t = p.power_limit()(t);
  if (t_hbm > t) t = t_hbm, c.bound = Bound::kHbm;
  if (fixed > t) c.bound = Bound::kLaunch;
  c.time_s = fixed + t;
  return c;
}

}  // namespace

double band_pairs(double n, double w) {
  if (n <= w) return n * (n + 1) / 2;
  return w * (w + 1) / 2 + (n - w) * w;
}

// Hopper's and Blackwell's attention kernels are built on warpgroup-wide MMAs (FA3, TensorRT-LLM's
// sm90 / sm100 FMHA, cuDNN), with their own tiles and fp8 paths.
static bool warpgroup_mma_kernels(const hw::GpuSpec& gpu) {
  return gpu.architecture == "hopper" || gpu.architecture == "blackwell";
}

double softmax_time_per_pair(const hw::GpuSpec& gpu) {
  return warpgroup_mma_kernels(gpu) ? 1 / gpu.special_function_rate_per_sm() : 0;
}

AttentionTiles flash_forward_tiles(const hw::GpuSpec& gpu, double head_dim) {
  if (head_dim <= 64) return {128, 128};
  if (head_dim <= 128) return {128, 64};
  if (warpgroup_mma_kernels(gpu) && head_dim <= 256) return {128, 64};
  return {64, 64};
}

AttentionTiles flash_backward_tiles(double head_dim) {
  if (head_dim <= 64) return {128, 128};
  if (head_dim <= 128) return {64, 128};
  return {64, 64};
}

// A CPU device (models/cpu/cpu_kernels.hpp): the score GEMMs of the visible pairs.
static KernelCost cpu_attention(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, const AttentionShape& s,
                         bool backward) {
  const Resolved r = resolve(s);
  const double visible = useful_flops(r) / (2 * r.batch * r.heads * r.seq_q * r.seq_kv * (r.hd + r.vd));
  const hw::CpuSpec& cpu = *gpu.host_cpu;
  return cpu_attention_kernel(cpu, cpu_params_or_defaults(cpu, p.cpu), dtype, r.batch, r.seq_q, r.seq_kv, r.heads, r.hd,
                              visible, backward);
}

KernelCost attention_prefill(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, const AttentionShape& s) {
  if (gpu.host_cpu) return cpu_attention(gpu, p, dtype, s, false);
  const Resolved r = resolve(s);
  const AttentionTiles t = flash_forward_tiles(gpu, std::max(r.hd, r.vd));
  const Walk w = forward_walk(r, t);
  const double e = dtype_bytes(dtype), sms = gpu.sm_count;
  const double dims = r.hd + r.vd;  // K and V row lengths; a tile's QK^T and PV
  const double tile_time = 2 * t.rows * t.cols * dims / (matrix_rate_per_sm(gpu, dtype) * p.attention_efficiency_for(dtype)) +
                           t.rows * t.cols * softmax_time_per_pair(gpu);
  const double groups = r.batch * r.heads;
  const double t_matrix = std::max(groups * w.total / sms, w.longest) * tile_time;
  const double l2_bytes = groups * w.total * t.cols * dims * e;
  const double q_o = r.batch * r.heads * r.seq_q * dims * e;
  const double kv = r.batch * r.kv_heads * r.seq_kv * dims * e;
  const double t_l2 = l2_bytes / (gpu.l2_read_bandwidth() * p.l2_efficiency);
  const double t_hbm = (q_o + kv) / (gpu.hbm_bandwidth * p.hbm_efficiency);
  const double fixed = p.launch_overhead_s + p.attention_overhead_s[0];
  if (p.attention_cta_overhead_s > 0) {  // each CTA's own fixed work, packed on the SMs with its tiles
    // With a CTA rate: its Q rows and first K/V tile in and its O rows out, at that rate (the
    // later K/V tiles stream behind the MMAs, through L2).
    const double bw = p.attention_cta_bandwidth;
    const double first_tile = std::min(t.cols, r.seq_kv) * dims * e;
    const double group_io = bw > 0 ? (r.seq_q * dims * e + w.ctas * first_tile) / bw : 0;
    const double cta_io = bw > 0 ? (std::min(t.rows, r.seq_q) * dims * e + first_tile) / bw : 0;
    const double cta = p.attention_cta_overhead_s;
    const double t_ctas = std::max((groups * w.total * tile_time + groups * (w.ctas * cta + group_io)) / sms,
                                   w.longest * tile_time + cta + cta_io);
    return finish(p, fixed, t_ctas, t_l2, t_hbm, useful_flops(r), q_o + kv);
  }
  const double waves = std::ceil(groups * w.ctas / sms);
  return finish(p, fixed + waves * p.tile_overhead_s, t_matrix, t_l2, t_hbm, useful_flops(r), q_o + kv);
}

KernelCost qkv_preprocess(const hw::GpuSpec& gpu, const KernelParams& p, double tokens, double heads, double kv_heads,
                          double head_dim, DType act, DType q_dtype, DType cache_dtype) {
  const double in = tokens * (heads + 2 * kv_heads) * head_dim * dtype_bytes(act);
  const double out = tokens * head_dim * (heads * dtype_bytes(q_dtype) + 2 * kv_heads * dtype_bytes(cache_dtype));
  const double rope_flops = 3 * tokens * (heads + kv_heads) * head_dim;  // x cos + rotated x sin, per element
  return streaming_kernel(gpu, p, in + out, rope_flops);
}

KernelCost attention_backward(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, const AttentionShape& s) {
  if (gpu.host_cpu) return cpu_attention(gpu, p, dtype, s, true);
  // The backward pass is costed with V as long as K (value_dim not yet modelled here: MLA's
  // training attention is priced at its Q/K head dimension, 192 where V has 128).
  AttentionShape square = s;
  square.value_dim = 0;
  const Resolved r = resolve(square);
  const AttentionTiles t = flash_backward_tiles(r.hd);
  const Walk w = backward_walk(r, t);
  const double e = dtype_bytes(dtype), sms = gpu.sm_count;
  const double tile_time =
      10 * t.rows * t.cols * r.hd / (matrix_rate_per_sm(gpu, dtype) * p.attention_backward_efficiency);
  const double groups = r.batch * r.heads;
  const double t_matrix = std::max(groups * w.total / sms, w.longest) * tile_time;
  // Per visited block: Q, dO (and LSE) tiles in, dQ fp32 read-modify-write through L2 atomics.
  const double l2_bytes = groups * w.total * t.rows * r.hd * (2 * e + 2 * 4);
  // HBM: Q, K, V, O, dO in; dQ, dK, dV out (per query head for dK/dV before the GQA sum).
  const double q_side = r.batch * r.heads * r.seq_q * r.hd * e;
  const double kv_side = r.batch * r.kv_heads * r.seq_kv * r.hd * e;
  const double bytes = 5 * q_side + 4 * kv_side;
  const double t_l2 = l2_bytes / (gpu.l2_read_bandwidth() * p.l2_efficiency);
  const double t_hbm = bytes / (gpu.hbm_bandwidth * p.hbm_efficiency);
  const double waves = std::ceil(groups * w.ctas / sms);
  // Preprocessing (dO o O row sums) and dQ fp32 -> dtype conversion: two streaming kernels.
  const KernelCost pre = streaming_kernel(gpu, p, 2 * q_side, 2 * r.batch * r.heads * r.seq_q * r.hd);
  const KernelCost post = streaming_kernel(gpu, p, q_side * (4 / e + 1), r.batch * r.heads * r.seq_q * r.hd);
  KernelCost c = finish(p, p.launch_overhead_s + waves * p.tile_overhead_s, t_matrix, t_l2, t_hbm,
                        2.5 * useful_flops(r), bytes);
  c.time_s += pre.time_s + post.time_s;
  c.bytes += pre.bytes + post.bytes;
  return c;
}

AttentionShape mla_prefill_shape(double batch, double seq, double heads, const MlaDims& m) {
  AttentionShape a;
  a.batch = batch, a.seq_q = seq, a.heads = a.kv_heads = heads;
  a.head_dim = m.nope + m.rope, a.value_dim = m.v;
  return a;
}

DecodeShape mla_decode_shape(double batch, double context, double heads, const MlaDims& m) {
  DecodeShape d;
  d.batch = batch, d.context = context, d.heads = heads, d.kv_heads = 1;
  d.head_dim = m.kv_lora + m.rope, d.value_dim = m.kv_lora, d.shared_kv = true;
  d.block_tokens = 64;
  return d;
}

bool mla_prefill_runs_fp8(const hw::GpuSpec& gpu, DType cache) {
  return dtype_bytes(cache) == 1 && warpgroup_mma_kernels(gpu);
}

KernelCost mla_prefill(const hw::GpuSpec& gpu, const KernelParams& p, DType cache, const AttentionShape& s) {
  KernelParams q = p;
  if (p.mla_prefill_efficiency > 0) q.attention_efficiency = p.mla_prefill_efficiency;
  if (p.mla_prefill_efficiency_fp8 > 0) q.attention_efficiency_fp8 = p.mla_prefill_efficiency_fp8;
  if (p.mla_overhead_s[0] > 0) q.attention_overhead_s[0] = p.mla_overhead_s[0];
  if (p.mla_prefill_cta_overhead_s > 0) q.attention_cta_overhead_s = p.mla_prefill_cta_overhead_s;
  if (p.mla_prefill_cta_bandwidth > 0) q.attention_cta_bandwidth = p.mla_prefill_cta_bandwidth;
  if (!mla_prefill_runs_fp8(gpu, cache)) return attention_prefill(gpu, q, DType::kBf16, s);
  // Q, K and V to fp8 first, one element each read in 16 bit and written in 8.
  const Resolved r = resolve(s);
  const double elements = r.batch * r.heads * (r.seq_q * r.hd + r.seq_kv * (r.hd + r.vd));
  const KernelCost quantize = streaming_kernel(gpu, p, elements * (2 + dtype_bytes(cache)), elements);
  KernelCost c = attention_prefill(gpu, q, cache, s);
  c.time_s += quantize.time_s;
  c.bytes += quantize.bytes;
  return c;
}

// MLA decode's shape as its kernel runs it: one CTA per sequence where the parameters say so.
static DecodeShape mla_decode_as_run(const KernelParams& p, DecodeShape s) {
  if (p.mla_decode_single_cta > 0) s.split_kv = false;
  return s;
}

KernelCost mla_decode(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, const DecodeShape& s) {
  KernelParams q = p;
  if (p.mla_decode_efficiency > 0) q.attention_decode_efficiency = p.mla_decode_efficiency;
  if (p.mla_overhead_s[1] > 0) q.attention_overhead_s[1] = q.attention_overhead_s[2] = p.mla_overhead_s[1];
  if (p.mla_decode_cta_bandwidth > 0) q.decode_cta_bandwidth = {p.mla_decode_cta_bandwidth, p.mla_decode_cta_bandwidth};
  return attention_decode(gpu, q, dtype, mla_decode_as_run(p, s));
}

DecodeLaunch mla_decode_launch(const hw::GpuSpec& gpu, const KernelParams& p, const DecodeShape& s) {
  return decode_launch(gpu, p, mla_decode_as_run(p, s));
}

int decode_kv_splits(const hw::GpuSpec& gpu, const DecodeShape& s) {
  const double groups = std::max(1.0, s.batch) * std::max(1.0, s.kv_heads > 0 ? s.kv_heads : s.heads);
  const double slots = static_cast<double>(gpu.sm_count) * 4;  // 4 resident decode CTAs per SM
  // FlashDecoding: split until the CTAs fill the GPU, each split at least 256 keys long.
  const double by_fill = std::ceil(slots / groups);
  const double by_length = std::max(1.0, std::floor(s.context / 256));
  return static_cast<int>(std::clamp(std::min(by_fill, by_length), 1.0, 64.0));
}

DecodeLaunch decode_launch(const hw::GpuSpec& gpu, const KernelParams& p, const DecodeShape& s) {
  const double batch = std::max(1.0, s.batch), heads = std::max(1.0, s.heads);
  const double kv_heads = std::clamp(s.kv_heads > 0 ? s.kv_heads : heads, 1.0, heads);
  DecodeLaunch l;
  l.grouped = s.shared_kv || p.decode_group_limit <= 0 || heads / kv_heads <= p.decode_group_limit;
  DecodeShape units = s;
  units.kv_heads = l.grouped ? kv_heads : heads;
  l.splits = s.split_kv ? decode_kv_splits(gpu, units) : 1;
  l.ctas = batch * units.kv_heads * l.splits;
  return l;
}

KernelCost attention_decode(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, const DecodeShape& s) {
  if (gpu.host_cpu) {  // a CPU device: the KV cache streamed from DRAM (models/cpu/cpu_kernels.hpp)
    const hw::CpuSpec& cpu = *gpu.host_cpu;
    return cpu_decode_attention_kernel(cpu, cpu_params_or_defaults(cpu, p.cpu), dtype, s.batch, s.context, s.heads,
                                       s.kv_heads > 0 ? s.kv_heads : s.heads, s.head_dim);
  }
  const double batch = std::max(1.0, s.batch), heads = std::max(1.0, s.heads);
  const double kv_heads = std::clamp(s.kv_heads > 0 ? s.kv_heads : heads, 1.0, heads);
  const double hd = std::ceil(std::max(1.0, s.head_dim) / 8) * 8;  // 16-byte vector loads of bf16
  const double vd = s.value_dim > 0 ? std::ceil(s.value_dim / 8) * 8 : hd;
  const double row = s.shared_kv ? hd : hd + vd;  // cached elements per token and KV head
  const double ctx = std::max(1.0, s.context), e = dtype_bytes(dtype);
  const double block = std::max(1.0, s.block_tokens);
  const double kv_bytes = batch * kv_heads * std::ceil(ctx / block) * block * row * e;
  const double q_o = batch * heads * (hd + vd) * e;
  const double flops = 2 * batch * heads * ctx * (hd + vd);
  const double stream = p.attention_decode_efficiency > 0 ? p.attention_decode_efficiency : p.hbm_efficiency;
  const double fixed = p.launch_overhead_s + p.decode_overhead_for(dtype);
  const DecodeLaunch launch = decode_launch(gpu, p, s);
  const int splits = launch.splits;
  const double group = heads / kv_heads;
  // Scores and weighted sums. A grouped CTA serving several query heads runs them on the matrix
  // units, the group's heads as the rows of 16-row MMAs (TensorRT-LLM's XQA, FlashInfer's
  // tensor-core decode), its K/V dequantised to 16 bits; one head per K/V row (MHA, or the
  // per-head kernel) runs them on the vector units. kernels-aic B200, 32 heads on 1 KV head,
  // fp8 cache, 16 sequences of 32768 tokens: 24.6 us measured, where the vector units alone
  // would take ~180 us (8.6 GFLOP at ~48 TFLOP/s).
  const bool trtllm = s.kernels == DecodeKernels::kTensorRtLlm;
  const bool group_cta = launch.grouped && group > 1;  // one CTA serves a GQA group of heads
  const bool on_matrix = trtllm && group_cta;
  const double t_math = on_matrix ? 2 * batch * kv_heads * std::ceil(group / 16) * 16 * ctx * (hd + vd) /
                                        (gpu.peak(DType::kBf16) * p.matrix_efficiency)
                                  : flops / (gpu.vector_rate(dtype) * p.vector_efficiency);
  double t_memory = 0;
  if (p.decode_cta_bandwidth[0] > 0) {
    // CTAs of a grouped kernel (each a whole GQA group) or, for groups above its limit, of a
    // per-head kernel whose heads re-read their group's K and V from L2 (kernel_params.hpp).
    const double cta_bytes = std::ceil(ctx / splits) * row * e;
    const double per_cta = (group_cta ? p.decode_cta_overhead_for(dtype) : p.decode_head_cta_overhead_s) +
                           cta_bytes / p.decode_cta_bandwidth_for(dtype);
    const double t_ctas = std::max(launch.ctas * per_cta / gpu.sm_count, per_cta);
    const double t_l2 = (launch.grouped ? 0 : kv_bytes * group) / (gpu.l2_read_bandwidth() * p.l2_efficiency);
    t_memory = std::max({(kv_bytes + q_o) / (gpu.hbm_bandwidth * stream), t_ctas, t_l2});
  } else {
    // Little's law: each CTA keeps a K and a V paged block of the next two steps in flight.
    const double in_flight = std::min(launch.ctas, static_cast<double>(gpu.sm_count) * 4) * 2 * block * row * e;
    const double latency = gpu.hbm_latency() * p.loaded_latency_factor;
    t_memory = (kv_bytes + q_o) / std::min(gpu.hbm_bandwidth * stream, in_flight / latency);
  }
  KernelCost c;
  c.flops = flops;
  c.bytes = kv_bytes + q_o;
  c.time_s = fixed + std::max(t_memory, t_math);
  c.bound = t_memory >= t_math ? Bound::kHbm : on_matrix ? Bound::kMatrix : Bound::kVector;
  if (fixed > std::max(t_memory, t_math)) c.bound = Bound::kLaunch;
  if (splits > 1) {  // partial outputs (fp32 O and log-sum-exp) of each split, reduced
    const double partial = batch * heads * splits * (vd + 2) * 4;
    if (trtllm && p.decode_cta_bandwidth[0] > 0) {
      // In the kernel: the last CTA of each head's splits reads their partials at its own rate,
      // after the others wrote them (XQA / MMHA multi-block mode); no second launch. Without the
      // CTA parameters (family defaults: no CTA rate to price it at) the second kernel stands in.
      // A GQA group's partials are reduced by one CTA; MLA's, whose one latent serves every head
      // of the sequence (up to 128), head by head in parallel (FlashMLA's combine step).
      const double per_head = (launch.grouped && !s.shared_kv ? group : 1) * splits * (vd + 2) * 4;
      c.time_s += std::max(partial / (gpu.hbm_bandwidth * stream), per_head / p.decode_cta_bandwidth_for(dtype));
      c.bytes += 2 * partial;
    } else {
      const KernelCost reduce = streaming_kernel(gpu, p, partial + batch * heads * vd * e, batch * heads * splits * vd);
      c.time_s += reduce.time_s;
      c.bytes += reduce.bytes;
    }
  }
  return c;
}

}  // namespace exasim::models
