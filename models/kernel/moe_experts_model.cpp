#include "models/kernel/moe_experts_model.hpp"

#include <algorithm>
#include <array>

#include "models/kernel/kernel_models.hpp"

namespace exasim::models {

MoeExpertsCost moe_experts_time(const hw::GpuSpec& gpu, const KernelParams& p, const GemmFormat& format,
                                const MoeExpertsShape& s) {
  constexpr double kAct = 2;        // 16-bit activations in and out
  constexpr double kIndexBytes = 4; // int32 expert ids and positions
  MoeExpertsCost c;
  const double T = s.tokens, copies = s.load.routed_tokens, h = s.hidden, F = s.expert_ffn;
  c.route = memory_op(gpu, p, MemoryOp::kSoftmax, DType::kFp32, T, s.experts);
  // Sorting the picks: the index kernels read and write the T top_k ids a few times (3 passes);
  // the gather reads the rank's copies' 16-bit rows and writes them in the GEMM's dtype.
  const KernelCost sort = streaming_kernel(gpu, p, 3 * 2 * T * s.top_k * kIndexBytes, 0);
  const KernelCost gather = gather_kernel(gpu, p, copies * h * (kAct + dtype_bytes(format.dtype)), copies * h);
  c.permute = sort;
  // The format's own fixed cost (its quantize and scale-layout kernels) with the permute, where
  // the cast to the GEMM's format runs.
  c.permute.time_s += p.moe_op_overhead_s[static_cast<std::size_t>(KernelParams::moe_gemm_slot(format.dtype, format.recipe))];
  c.permute.time_s += gather.time_s, c.permute.bytes += gather.bytes, c.permute.flops += gather.flops;
  if (gather.time_s > sort.time_s) c.permute.bound = gather.bound;
  if (s.load.active_experts > 0 && copies > 0) {
    const double experts = s.load.active_experts, m = std::max(1.0, copies / experts);
    c.up = grouped_gemm_time(gpu, p, format.dtype, m, (s.gated ? 2 : 1) * F, h, experts, format.recipe);
    c.act = memory_op(gpu, p, s.gated ? MemoryOp::kSiluMul : MemoryOp::kGelu, DType::kBf16, copies, F);
    c.down = grouped_gemm_time(gpu, p, format.dtype, m, h, F, experts, format.recipe);
  }
  c.finalize = gather_kernel(gpu, p, (copies + T) * h * kAct + T * s.top_k * kIndexBytes, copies * h * 2);
  const std::array parts = {&c.route, &c.permute, &c.up, &c.act, &c.down, &c.finalize};
  const KernelCost* longest = parts[0];
  for (const KernelCost* k : parts) {
    c.total.time_s += k->time_s, c.total.flops += k->flops, c.total.bytes += k->bytes;
    if (k->time_s > longest->time_s) longest = k;
  }
  c.total.bound = longest->bound;
  return c;
}

}  // namespace exasim::models
