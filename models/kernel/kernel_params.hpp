#pragma once
// Named, calibratable parameters of the kernel models (kernel_models.hpp): how far each unit of
// the GPU falls short of its datasheet peak, and the fixed costs of a launch and of a CTA tile.
// Every parameter is physical (a fraction of a spec value, a time, a byte count), so a fitted
// value can be checked for plausibility and carried to GPUs of the same family. Defaults per
// family are measured figures with their sources (kernel_params.cpp); `calibration:` files
// replace them.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/cpu/cpu_params.hpp"
#include "models/kernel/memory_op.hpp"

namespace exasim::models {

struct KernelParams {
  // Matrix units: fraction of the per-SM dense peak that a CTA's main loop sustains.
  double matrix_efficiency = 0.85;
  // The same for fp8 operands (0: matrix_efficiency). Measured apart because 8-bit main loops
  // fall further short of their (doubled) peak on some families: H100 MAMF 0.709 fp8 vs 0.803 bf16.
  double matrix_efficiency_fp8 = 0;
  double matrix_efficiency_for(DType dtype) const {
    return dtype == DType::kFp8 && matrix_efficiency_fp8 > 0 ? matrix_efficiency_fp8 : matrix_efficiency;
  }
  // Vector units (non-matrix FLOPs of memory-bound ops and attention softmax).
  double vector_efficiency = 0.6;
  // Fraction of the datasheet HBM bandwidth reached by streaming reads and writes.
  double hbm_efficiency = 0.8;
  // Fraction of GpuSpec::l2_bandwidth reached when all SMs load GEMM operand tiles from L2.
  double l2_efficiency = 0.5;
  // Per kernel: launch, front end, completion; what an empty kernel costs end to end.
  double launch_overhead_s = 4e-6;
  // Per wave of CTA tiles: pipeline prologue (first operand loads) and epilogue (C store).
  double tile_overhead_s = 1e-6;
  // HBM latency under load, as a multiple of GpuSpec::hbm_latency (idle, pointer chase). Little's
  // law: an SM streams (bytes its CTAs keep in flight) / (loaded latency); why a GEMM with few
  // or shallow tiles needs split-K or deeper pipelines to reach full bandwidth.
  double loaded_latency_factor = 3;
  // Power limit: a GPU at full matrix load draws more than its board power (A100 SXM: 400 W)
  // at boost clock, so after about `power_window_s` of compute-bound work its power controller
  // lowers the clocks, and on-chip rates (matrix units, shared memory, L2) fall to
  // `sustained_clock_fraction` of their burst value. HBM bandwidth does not scale with the SM
  // clock. Isolated kernels shorter than the window run at burst clocks; a training step keeps
  // the GPU busy back to back, so there every kernel runs sustained (`sustained_load`).
  double sustained_clock_fraction = 1;
  double power_window_s = 1e-3;
  bool sustained_load = false;
  // FlashAttention main loop: fraction of the matrix peak reached by the forward and the
  // backward kernels (softmax, rescaling and the recomputation share the SM with the MMAs).
  double attention_efficiency = 0.6;
  double attention_backward_efficiency = 0.45;
  // Memory-bound kernels (norms, activations, adds): fraction of the HBM bandwidth they reach,
  // and their launch cost (usually below a GEMM's: no prologue). Implementations differ by op
  // (a fused vectorised add streams at ~90% of HBM, a row-wise norm with a block reduction at
  // ~35%), so each op may carry its own measured fraction; 0 there means memory_op_efficiency.
  double memory_op_efficiency = 0.75;
  std::array<double, kMemoryOpCount> memory_op_efficiency_by_op{};
  double memory_op_overhead_s = 3e-6;
  std::array<double, kMemoryOpCount> memory_op_overhead_by_op{};

  double memory_efficiency(MemoryOp op) const {
    const double v = memory_op_efficiency_by_op[static_cast<std::size_t>(op)];
    return v > 0 ? v : memory_op_efficiency;
  }
  double memory_overhead(MemoryOp op) const {
    const double v = memory_op_overhead_by_op[static_cast<std::size_t>(op)];
    return v > 0 ? v : memory_op_overhead_s;
  }
  // When the device is a host CPU (GpuSpec::host_cpu): the CPU models' parameters from the
  // scenario's calibration file (its cpu: section); empty: the CPU spec's defaults.
  std::shared_ptr<const CpuParams> cpu;
  std::string source;  // where the values came from ("family default: ...", a calibration file)

  // Family defaults, chosen by the GPU's architecture: fitted to the measured kernels of one
  // GPU of the family where there are some (ampere: A100), scaled by MAMF for the others.
  static KernelParams defaults_for(const hw::GpuSpec& gpu);
  // What exasim knows without any measured kernel table: datasheet plus published
  // microbenchmarks (MAMF, HBM and L2 bandwidth, FlashAttention-2); the "uncalibrated" baseline
  // of `exasim calibrate`.
  static KernelParams microbenchmark_defaults(const hw::GpuSpec& gpu);
};

// Name/value view for calibration and reports: "matrix_efficiency", "hbm_efficiency", ...
// kind: fraction in (0, 1], a time in s, a byte count, or a factor >= 1.
enum class ParamKind { kFraction, kTime, kBytes, kFactor };
struct NamedParam {
  std::string name;
  double* value;
  std::string unit;
  ParamKind kind = ParamKind::kFraction;
};
std::vector<NamedParam> named_params(KernelParams& p);

}  // namespace exasim::models
