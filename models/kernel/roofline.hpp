#pragma once
// Roofline kernel cost: a kernel takes the longer of its math time at the achieved matrix (or
// vector) rate and its memory time at the achieved HBM bandwidth, plus a launch overhead.
// A placeholder for the tile-level GEMM and attention models; every caller goes through here.
#include "hw/dtype.hpp"
#include "hw/gpu_spec.hpp"
#include "models/kernel/kernel_params.hpp"

namespace exasim::models {

enum class Bound { kMatrix, kVector, kHbm, kLaunch };
const char* bound_name(Bound b);

struct KernelCost {
  double time_s = 0;
  Bound bound = Bound::kLaunch;
  double flops = 0;
  double bytes = 0;
  double achieved_flops() const { return time_s > 0 ? flops / time_s : 0; }
  double achieved_bytes_per_s() const { return time_s > 0 ? bytes / time_s : 0; }
};

// A kernel of `flops` on the matrix units (or vector units when matrix == false) that moves
// `bytes` through HBM.
KernelCost roofline(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double flops, double bytes,
                    bool matrix = true);

// C[m,n] = A[m,k] B[k,n], `batch` independent products; operands and result in `dtype`.
KernelCost gemm(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n, double k,
                double batch = 1);

// A streaming kernel (elementwise, norm, softmax, ...) that moves `bytes` and does `flops` on the
// vector units.
KernelCost memory_bound(const hw::GpuSpec& gpu, const KernelParams& p, double bytes, double flops = 0);

}  // namespace exasim::models
