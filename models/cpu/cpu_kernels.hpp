#pragma once
// The kernel-time API of models/kernel/kernel_models.hpp on a host CPU socket (a device whose
// GpuSpec::host_cpu is set): the same shapes, answered by the CPU models (cpu_gemm_model.hpp,
// cpu_memory_model.hpp) with every core working. The GPU model functions forward here, so the
// training, serving and planner layers run unchanged on CPUs.
//   GEMM           cpu_gemm_time over the batch
//   attention      the two score GEMMs per head (QK^T, PV) at the GEMM model's rate (causal: the
//                  visible half) plus the softmax streamed through memory; decode streams the KV
//                  cache from DRAM (LLM decode on CPUs is bandwidth-bound, as llama.cpp and
//                  xFasterTransformer measure)
//   memory-bound   the op's bytes streamed through the memory model
// Unsupported dtypes (fp8, fp4, int8: no modelled CPU path) throw PlanError with the reason.
#include <memory>

#include "hw/cpu_spec.hpp"
#include "hw/dtype.hpp"
#include "models/cpu/cpu_params.hpp"
#include "models/kernel/kernel_cost.hpp"

namespace exasim::models {

// LLM runtimes on CPUs (llama.cpp, xFasterTransformer, oneDNN/MKL) spread matrix-vector products
// (batch-1 decode) over every core, where the Eigen GEMM that exasim-bench calibrates does not:
// the device view of calibrated or default parameters switches that on.
CpuParams serving_runtime(CpuParams p);

// The parameters to use: the calibrated ones when given, else the spec's defaults (cached).
const CpuParams& cpu_params_or_defaults(const hw::CpuSpec& cpu, const std::shared_ptr<const CpuParams>& calibrated);

KernelCost cpu_gemm_kernel(const hw::CpuSpec& cpu, const CpuParams& p, DType dtype, double m, double n, double k,
                           double batch);
// Attention over `batch` sequences of seq_q queries against seq_kv keys (visible fraction of the
// score matrix: `visible`, 0.5-ish for causal); `backward` charges FlashAttention's 2.5x.
KernelCost cpu_attention_kernel(const hw::CpuSpec& cpu, const CpuParams& p, DType dtype, double batch, double seq_q,
                                double seq_kv, double heads, double head_dim, double visible, bool backward);
// Decode attention: one query per sequence over `context` cached tokens of kv_heads x head_dim.
KernelCost cpu_decode_attention_kernel(const hw::CpuSpec& cpu, const CpuParams& p, DType kv_dtype, double batch,
                                       double context, double heads, double kv_heads, double head_dim);
// A streaming kernel: `bytes` moved (read and written together), `flops` of vector work.
KernelCost cpu_streaming_kernel(const hw::CpuSpec& cpu, const CpuParams& p, double bytes, double flops);

}  // namespace exasim::models
