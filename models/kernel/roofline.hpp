#pragma once
// Roofline kernel cost: a kernel takes the longer of its math time at the achieved matrix (or
// vector) rate and its memory time at the achieved HBM bandwidth, plus a launch overhead.
// Kept as the BASELINE the tile-level models (kernel_models.hpp) are compared against: with
// efficiencies 1 and no overhead it is the datasheet roofline; with matrix_efficiency,
// hbm_efficiency and launch_overhead fitted it is the "three-number" roofline.
#include "hw/dtype.hpp"
#include "hw/gpu_spec.hpp"
#include "models/kernel/kernel_cost.hpp"
#include "models/kernel/kernel_params.hpp"

namespace exasim::models {

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
