#include "models/cpu/cpu_kernels.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "hw/error.hpp"
#include "models/cpu/cpu_gemm_model.hpp"
#include "models/cpu/cpu_memory_model.hpp"

namespace exasim::models {

namespace {

// The CPU computes 16-bit types in fp32 lanes; fp8/fp4/int8 have no modelled path.
void check_dtype(const hw::CpuSpec& cpu, DType dtype) {
  if (dtype == DType::kFp8 || dtype == DType::kFp4 || dtype == DType::kInt8) {
    throw PlanError("CPU " + cpu.name + " has no modelled " + std::string(dtype_name(dtype)) + " kernels", {},
                    "use precision bf16, fp16 or fp32 on CPUs");
  }
}

int threads_of(const CpuParams& p, const hw::CpuSpec& cpu) { return std::max(1, p.all_threads > 1 ? p.all_threads : cpu.cores); }

KernelCost cost(double time, bool compute_bound, double flops, double bytes) {
  KernelCost c;
  c.time_s = time;
  c.bound = compute_bound ? Bound::kVector : Bound::kHbm;
  c.flops = flops;
  c.bytes = bytes;
  return c;
}

}  // namespace

CpuParams serving_runtime(CpuParams p) {
  p.matrix_vector_parallel = true;
  return p;
}

const CpuParams& cpu_params_or_defaults(const hw::CpuSpec& cpu, const std::shared_ptr<const CpuParams>& calibrated) {
  if (calibrated) return *calibrated;
  thread_local std::string name;
  thread_local CpuParams defaults;
  if (name != cpu.name) {
    defaults = serving_runtime(CpuParams::defaults_for(cpu));
    name = cpu.name;
  }
  return defaults;
}

KernelCost cpu_gemm_kernel(const hw::CpuSpec& cpu, const CpuParams& p, DType dtype, double m, double n, double k,
                           double batch) {
  check_dtype(cpu, dtype);
  const int threads = threads_of(p, cpu);
  const CpuGemmShape shape{m, n, k, true};  // weights and KV blocks are cold in a model's pass
  const double one = cpu_gemm_time(cpu, p, shape, dtype, threads);
  const CpuGemmTerms terms = cpu_gemm_terms(cpu, p, shape, dtype, threads);
  const double e = dtype_bytes(dtype);
  return cost(batch * one, terms.compute_at_peak_s >= terms.traffic_s, 2 * m * n * k * batch,
              batch * e * (m * k + k * n + m * n));
}

KernelCost cpu_attention_kernel(const hw::CpuSpec& cpu, const CpuParams& p, DType dtype, double batch, double seq_q,
                                double seq_kv, double heads, double head_dim, double visible, bool backward) {
  check_dtype(cpu, dtype);
  // Scores S = Q K^T and output O = P V for every head: two GEMMs of the visible part.
  const KernelCost qk = cpu_gemm_kernel(cpu, p, dtype, seq_q, seq_kv, head_dim, batch * heads);
  const KernelCost pv = cpu_gemm_kernel(cpu, p, dtype, seq_q, head_dim, seq_kv, batch * heads);
  const double scores = batch * heads * seq_q * seq_kv * visible;
  const double softmax = cpu_stream_time(p, 4 * scores, 4 * scores, 8 * scores / (batch * heads), threads_of(p, cpu));
  const double forward = visible * (qk.time_s + pv.time_s) + softmax;
  const double flops = visible * (qk.flops + pv.flops);
  return cost(backward ? 2.5 * forward : forward, true, backward ? 2.5 * flops : flops, qk.bytes + pv.bytes);
}

KernelCost cpu_decode_attention_kernel(const hw::CpuSpec& cpu, const CpuParams& p, DType kv_dtype, double batch,
                                       double context, double heads, double kv_heads, double head_dim) {
  check_dtype(cpu, kv_dtype);
  const double kv_bytes = batch * context * 2 * kv_heads * head_dim * dtype_bytes(kv_dtype);
  const double flops = 4 * batch * context * heads * head_dim;
  const int threads = threads_of(p, cpu);
  // The cache of one layer was last read a whole step ago, after every other layer's: from DRAM.
  const double stream = cpu_read_only_stream_time(p, kv_bytes, std::numeric_limits<double>::max() / 4, threads);
  const double compute = flops / cpu_peak_flops(cpu, DType::kFp32, threads);
  return cost(std::max(stream, compute), compute > stream, flops, kv_bytes);
}

KernelCost cpu_streaming_kernel(const hw::CpuSpec& cpu, const CpuParams& p, double bytes, double flops) {
  const int threads = threads_of(p, cpu);
  // Elementwise kernels read about two bytes for each one they write (x, residual -> y).
  const double stream = cpu_stream_time(p, bytes * 2 / 3, bytes / 3, bytes, threads);
  const double compute = flops / cpu_peak_flops(cpu, DType::kFp32, threads);
  return cost(std::max(stream, compute), compute > stream, flops, bytes);
}

}  // namespace exasim::models
