#pragma once
// Memory-bound kernels (elementwise, activations, norms, softmax, RoPE, embedding, optimizer):
// the bytes they must move over the bandwidth of the level that holds the data, plus a launch.
//   time = memory_op_overhead + max(bytes / bandwidth, flops / vector rate)
// Bandwidth is hbm_bandwidth x the op's memory_op_efficiency (measured kernels differ: a fused
// add streams at ~80% of HBM, a row-wise norm with a block reduction at ~30%; L2 residency of
// inputs is not assumed: the Vidur tables show none). Small kernels cannot keep enough loads
// in flight to reach that bandwidth: each CTA (one per row for row-wise ops, one per
// 16 KiB otherwise) holds at most 16 KiB in flight, so it needs one loaded HBM latency per
// 16 KiB of its share, and the CTAs run in waves over the resident slots (Little's law). The op list and the bytes each op moves are in kernel_models.hpp.
#include <string_view>

#include "models/kernel/kernel_models.hpp"

namespace exasim::models {

// Bytes per CTA of a streaming kernel in flight (256 threads x 4 x 16-byte vector loads).
inline constexpr double kStreamBytesPerCta = 16384;

// True for ops that run one CTA per row (norms, softmax, cross entropy).
bool memory_op_is_row_wise(MemoryOp op);

// streaming_kernel() with an explicit CTA count and bytes per CTA (row-wise kernels), HBM
// efficiency and launch cost.
KernelCost streaming_kernel_ctas(const hw::GpuSpec& gpu, const KernelParams& p, double bytes, double flops, double ctas,
                                 double cta_bytes, double efficiency, double overhead);

}  // namespace exasim::models
