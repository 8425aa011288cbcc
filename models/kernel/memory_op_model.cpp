#include "models/kernel/memory_op_model.hpp"

#include "models/cpu/cpu_kernels.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace exasim::models {

namespace {

constexpr std::array<std::string_view, 19> kNames = {
    "elementwise",       "residual_add",  "silu_mul",         "gelu",
    "rmsnorm",           "layernorm",     "softmax",          "rope",
    "embedding",         "adam",          "silu_mul_backward", "gelu_backward",
    "rmsnorm_backward",  "layernorm_backward", "softmax_backward", "rope_backward",
    "embedding_backward", "cross_entropy", "cross_entropy_backward"};

}  // namespace

std::string_view memory_op_name(MemoryOp op) { return kNames[static_cast<std::size_t>(op)]; }

std::optional<MemoryOp> memory_op_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<MemoryOp>(i);
  return std::nullopt;
}

bool memory_op_is_row_wise(MemoryOp op) {
  switch (op) {
    case MemoryOp::kRmsNorm:
    case MemoryOp::kLayerNorm:
    case MemoryOp::kSoftmax:
    case MemoryOp::kRmsNormBackward:
    case MemoryOp::kLayerNormBackward:
    case MemoryOp::kSoftmaxBackward:
    case MemoryOp::kCrossEntropy:
    case MemoryOp::kCrossEntropyBackward: return true;
    default: return false;
  }
}

// Bytes: every tensor read and written once (x = rows x cols elements of e bytes); weights of
// norms are per column. FLOPs: arithmetic per element (exp, rsqrt and tanh counted as one).
MemoryTraffic memory_op_traffic(MemoryOp op, DType dtype, double rows, double cols) {
  const double e = dtype_bytes(dtype), x = std::max(0.0, rows) * std::max(0.0, cols);
  switch (op) {
    case MemoryOp::kElementwise: return {2 * x * e, x};
    case MemoryOp::kResidualAdd: return {3 * x * e, x};
    case MemoryOp::kSiluMul: return {3 * x * e, 5 * x};            // read gate and up, write out
    case MemoryOp::kGelu: return {2 * x * e, 8 * x};               // tanh approximation
    case MemoryOp::kRmsNorm: return {2 * x * e + cols * e, 4 * x};
    case MemoryOp::kLayerNorm: return {2 * x * e + 2 * cols * e, 7 * x};
    case MemoryOp::kSoftmax: return {2 * x * e, 5 * x};
    case MemoryOp::kRope: return {2 * x * e + rows * 2 * 4 * 64, 3 * x};  // in place; cos/sin cache rows
    case MemoryOp::kEmbedding: return {2 * x * e + rows * 8, 0};   // gather rows, write, token ids
    case MemoryOp::kAdam: return {x * (28 + e), 12 * x};           // fp32 grad, master, m, v in; master, m, v, weight out
    case MemoryOp::kSiluMulBackward: return {5 * x * e, 10 * x};   // dy, gate, up in; dgate, dup out
    case MemoryOp::kGeluBackward: return {3 * x * e, 10 * x};
    case MemoryOp::kRmsNormBackward: return {4 * x * e + 2 * cols * 4, 8 * x};  // dy, x, residual in; dx out
    case MemoryOp::kLayerNormBackward: return {4 * x * e + 4 * cols * 4, 10 * x};
    case MemoryOp::kSoftmaxBackward: return {3 * x * e, 3 * x};
    case MemoryOp::kRopeBackward: return {2 * x * e, 3 * x};
    case MemoryOp::kEmbeddingBackward: return {x * (e + 8), x};    // scatter-add into fp32 rows
    case MemoryOp::kCrossEntropy: return {x * (e + 3 * 4), 5 * x}; // logits in, fp32 max/sum/target
    case MemoryOp::kCrossEntropyBackward: return {x * (4 + e), 2 * x};
  }
  return {};
}

KernelCost streaming_kernel_ctas(const hw::GpuSpec& gpu, const KernelParams& p, double bytes, double flops,
                                 double ctas, double cta_bytes, double efficiency, double overhead) {
  KernelCost c;
  c.bytes = std::max(0.0, bytes);
  c.flops = std::max(0.0, flops);
  const double hbm_bw = gpu.hbm_bandwidth * efficiency;
  // Little's law per CTA: each CTA streams its share with at most kStreamBytesPerCta in flight,
  // one loaded latency per round trip, and the CTAs run in waves over the resident slots.
  const double n_ctas = std::max(1.0, ctas);
  const double slots = static_cast<double>(gpu.sm_count) * gpu.max_ctas();
  const double round_trips = std::max(1.0, cta_bytes / kStreamBytesPerCta);
  const double t_stream = std::ceil(n_ctas / slots) * round_trips * gpu.hbm_latency() * p.loaded_latency_factor;
  const double t_mem = std::max(c.bytes / hbm_bw, c.bytes > 0 ? t_stream : 0.0);
  const double t_vector = c.flops / (gpu.vector_rate(DType::kFp32) * p.vector_efficiency);
  const double t = std::max(t_mem, t_vector);
  c.time_s = overhead + t;
  c.bound = t_vector > t_mem ? Bound::kVector : Bound::kHbm;
  if (overhead > t) c.bound = Bound::kLaunch;
  return c;
}

namespace {

// A kernel that streams `bytes` in kStreamBytesPerCta chunks, one per CTA.
KernelCost chunked_stream(const hw::GpuSpec& gpu, const KernelParams& p, double bytes, double flops, double efficiency,
                          double overhead) {
  return streaming_kernel_ctas(gpu, p, bytes, flops, std::ceil(bytes / kStreamBytesPerCta),
                               std::min(bytes, kStreamBytesPerCta), efficiency, overhead);
}

}  // namespace

KernelCost streaming_kernel(const hw::GpuSpec& gpu, const KernelParams& p, double bytes, double flops) {
  if (gpu.host_cpu) return cpu_streaming_kernel(*gpu.host_cpu, cpu_params_or_defaults(*gpu.host_cpu, p.cpu), bytes, flops);
  return chunked_stream(gpu, p, bytes, flops, p.memory_op_efficiency, p.memory_op_overhead_s);
}

KernelCost gather_kernel(const hw::GpuSpec& gpu, const KernelParams& p, double bytes, double flops) {
  if (gpu.host_cpu) return streaming_kernel(gpu, p, bytes, flops);
  return chunked_stream(gpu, p, bytes, flops, p.gather_efficiency_or_default(), p.memory_op_overhead_s);
}

KernelCost input_cast(const hw::GpuSpec& gpu, const KernelParams& p, InputCast cast, DType to, double rows,
                      double cols) {
  if (cast == InputCast::kNone) return {};
  const double x = std::max(0.0, rows) * std::max(0.0, cols);
  // fp32 scales: one per 16 values for fp4 (NVFP4 stores e4m3 ones, counted at 1 B), per 128
  // for 8-bit group casts; one per tensor otherwise.
  const double scales = cast != InputCast::kPerGroup ? 4.0 : to == DType::kFp4 ? x / 16 : x / 128 * 4;
  const double reads = cast == InputCast::kPerTensor ? 2 : 1;
  const double bytes = x * (2 * reads + dtype_bytes(to)) + scales;
  const int kernel = cast_kernel(cast, to);
  KernelCost c = chunked_stream(gpu, p, bytes, 3 * x, p.cast_efficiency_for(kernel),
                                p.cast_overhead_s[static_cast<std::size_t>(kernel)]);
  // Block-scaled fp8: the scales copied into a TMA-aligned layout (KernelParams::scale_align_overhead),
  // read and written at the cast's rate.
  const bool unaligned = std::fmod(std::max(0.0, rows), 4.0) != 0 && cols > 128;
  if (cast == InputCast::kPerGroup && to == DType::kFp8 && p.scale_align_overhead_s > 0 && unaligned) {
    const KernelCost align = chunked_stream(gpu, p, 2 * scales, 0, p.cast_efficiency_for(kernel), p.scale_align_overhead_s);
    c.time_s += align.time_s, c.bytes += align.bytes;
  }
  return c;
}

KernelCost memory_op(const hw::GpuSpec& gpu, const KernelParams& p, MemoryOp op, DType dtype, double rows,
                     double cols) {
  const MemoryTraffic t = memory_op_traffic(op, dtype, rows, cols);
  if (gpu.host_cpu) return cpu_streaming_kernel(*gpu.host_cpu, cpu_params_or_defaults(*gpu.host_cpu, p.cpu), t.bytes, t.flops);
  // Row-wise kernels: a CTA per row moves one row's traffic; others: 16 KiB chunks.
  const bool by_row = memory_op_is_row_wise(op);
  const double ctas = by_row ? std::max(1.0, rows) : std::ceil(t.bytes / kStreamBytesPerCta);
  const double cta_bytes = by_row ? memory_op_traffic(op, dtype, 1, cols).bytes : std::min(t.bytes, kStreamBytesPerCta);
  return streaming_kernel_ctas(gpu, p, t.bytes, t.flops, ctas, cta_bytes, p.memory_efficiency(op), p.memory_overhead(op));
}

}  // namespace exasim::models
