#pragma once
// GEMM on a CPU (C[m,n] = A[m,k] B[k,n], a BLAS such as Eigen, MKL, OpenBLAS or BLIS):
//   time = overhead + micro-kernel time / efficiency + traffic_factor x traffic time
// The micro-kernel time counts the cycles of the register-blocked kernel (CpuParams: panels of up
// to 3 SIMD vectors of rows x 4 columns): per k step a panel of v vectors issues v x 4 FMAs and
// loads v + 4 operands, so it takes max(4v / FMA units, (v + 4) / load ports) cycles. A large
// GEMM runs at the FMA peak (threads x FMA units x lanes x 2 x clock); a few rows (decode with a
// small batch) are load-bound, and each extra panel (12 rows = 8 + 4 in fp32) is another pass
// over B. Traffic is that of the packing algorithm
// all these libraries use (Goto and van de Geijn, ACM TOMS 34(3), 2008): A and B are read, B is
// copied into a packed buffer that the micro-kernel reads back, C is written; its time comes from
// the memory model (cpu_memory_model.hpp) for the working set of A, B and C (the packed panel is
// sized by the BLAS to stay in cache next to them).
// A matrix-vector product (m or n = 1) is not packed or padded: A and B are read once, at the
// levels' read-only bandwidth (LevelBandwidth::read_only), scaled by its own factor
// (CpuGemmParams::matrix_vector_factor) instead of the packing traffic factor; its FMAs overlap
// those loads, so its time is the larger of compute and traffic, not their sum.
// Efficiency, traffic factors and overhead are fitted for one core and for all cores.
#include "hw/cpu_spec.hpp"
#include "hw/dtype.hpp"
#include "models/cpu/cpu_params.hpp"

namespace exasim::models {

struct CpuGemmShape {
  double m = 0, n = 0, k = 0;
  // B's first read comes from DRAM whatever its size: a model's weights in a forward pass, each
  // read once per step between reads of every other layer, so no cache still holds them (a
  // benchmark that repeats one product, as exasim-bench does, keeps them warm instead).
  bool b_from_dram = false;
};

// FLOP/s of `threads` cores at the spec's base clock. fp64 and fp32 use their SIMD lanes; fp16
// and bf16 are computed in fp32 lanes (converted on load, as CPU BLAS without matrix units do).
// Other dtypes throw ConfigError.
double cpu_peak_flops(const hw::CpuSpec& cpu, DType dtype, int threads);

// The terms of the model before its fitted factors, for calibration.
struct CpuGemmTerms {
  bool matrix_vector = false;    // m or n = 1
  int threads = 1;               // threads the product runs on (see CpuParams::matrix_vector_parallel)
  double compute_at_peak_s = 0;  // micro-kernel cycles at the base clock (matrix-vector: FLOPs at peak)
  double traffic_s = 0;          // operand and packing traffic through the memory model
};
CpuGemmTerms cpu_gemm_terms(const hw::CpuSpec& cpu, const CpuParams& p, const CpuGemmShape& s, DType dtype, int threads);

// The fitted group that applies: one core, or all cores when the product runs on several threads.
const CpuGemmParams& cpu_gemm_group(const CpuParams& p, int threads);
double cpu_gemm_efficiency(const CpuGemmParams& g, DType dtype);  // fp16/bf16/tf32 use fp32's

double cpu_gemm_time(const hw::CpuSpec& cpu, const CpuParams& p, const CpuGemmShape& s, DType dtype, int threads);

}  // namespace exasim::models
