#include "models/kernel/roofline.hpp"

#include <algorithm>

namespace exasim::models {

KernelCost roofline(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double flops, double bytes,
                    bool matrix) {
  // A dtype the GPU has no matrix path for runs at the fp32 rate (e.g. fp8 on A100 emulated).
  double peak = matrix ? gpu.peak(dtype) : gpu.vector_fp32_flops;
  if (peak <= 0) peak = gpu.peak(DType::kFp32);
  const double rate = peak * (matrix ? p.matrix_efficiency_for(dtype) : p.vector_efficiency);
  const double math = flops > 0 ? flops / rate : 0;
  const double mem = bytes > 0 ? bytes / (gpu.hbm_bandwidth * p.hbm_efficiency) : 0;
  KernelCost c;
  c.flops = flops;
  c.bytes = bytes;
  c.time_s = std::max(math, mem) + p.launch_overhead_s;
  if (math == 0 && mem == 0) c.bound = Bound::kLaunch;
  else c.bound = math >= mem ? (matrix ? Bound::kMatrix : Bound::kVector) : Bound::kHbm;
  return c;
}

KernelCost gemm(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n, double k,
                double batch) {
  const double flops = 2.0 * m * n * k * batch;
  const double bytes = (m * k + k * n + m * n) * dtype_bytes(dtype) * batch;
  return roofline(gpu, p, dtype, flops, bytes, true);
}

KernelCost memory_bound(const hw::GpuSpec& gpu, const KernelParams& p, double bytes, double flops) {
  return roofline(gpu, p, DType::kFp32, flops, bytes, false);
}

}  // namespace exasim::models
