#pragma once
// What every kernel model returns: the predicted time, which unit bounds it, and the work and
// traffic it was charged, so reports can show achieved FLOP/s and bytes/s.
#include <string_view>

namespace exasim::models {

// The resource whose time decides the kernel's: matrix units (Tensor/Matrix Cores), vector units
// (CUDA cores / SIMD), shared memory or L2 feeding the SMs, HBM, or the fixed launch cost.
enum class Bound { kMatrix, kVector, kSmemL2, kHbm, kLaunch };
const char* bound_name(Bound b);  // "matrix", "vector", "smem_l2", "hbm", "launch"

struct KernelCost {
  double time_s = 0;
  Bound bound = Bound::kLaunch;
  double flops = 0;  // useful FLOPs (not padded tiles)
  double bytes = 0;  // bytes the kernel must move to/from HBM at least once
  double achieved_flops() const { return time_s > 0 ? flops / time_s : 0; }
  double achieved_bytes_per_s() const { return time_s > 0 ? bytes / time_s : 0; }
};

}  // namespace exasim::models
