#include "models/cpu/cpu_gemm_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "hw/error.hpp"
#include "models/cpu/cpu_memory_model.hpp"

namespace exasim::models {

namespace {

// Bits of one SIMD lane for the dtype's arithmetic.
double lane_bits(DType dtype) {
  switch (dtype) {
    case DType::kFp64: return 64;
    case DType::kFp32:
    case DType::kTf32:
    case DType::kFp16:
    case DType::kBf16: return 32;
    default:
      throw ConfigError("no CPU GEMM model for dtype " + std::string(dtype_name(dtype)), {},
                        "CPU GEMMs are modelled for fp64, fp32, tf32, fp16 and bf16");
  }
}

// Cycles of the micro-kernel per k step and column group, summed over the row panels of m:
// whole panels of micro_kernel_vectors vectors, one panel of the remaining whole vectors, then
// a half and a quarter vector, then single rows (each a pass of its own over packed B).
double panel_cycles(const CpuParams& p, double m, double lanes, double fma_units) {
  const double cols = p.micro_kernel_columns;
  auto pass = [&](double vectors) { return std::max(vectors * cols / fma_units, (vectors + cols) / p.load_ports); };
  const double panel_rows = p.micro_kernel_vectors * lanes;
  double cycles = std::floor(m / panel_rows) * pass(p.micro_kernel_vectors);
  double rest = m - std::floor(m / panel_rows) * panel_rows;
  if (rest >= lanes) {
    cycles += pass(std::floor(rest / lanes));
    rest -= std::floor(rest / lanes) * lanes;
  }
  for (double part : {lanes / 2, lanes / 4}) {
    if (part >= 2 && rest >= part) {
      cycles += pass(1);
      rest -= part;
    }
  }
  return cycles + rest * pass(1);  // single rows
}

}  // namespace

double cpu_peak_flops(const hw::CpuSpec& cpu, DType dtype, int threads) {
  const double lanes = cpu.simd_width_bits / lane_bits(dtype);
  return std::max(threads, 1) * cpu.fma_units_per_core * lanes * 2.0 * cpu.base_clock_hz;
}

const CpuGemmParams& cpu_gemm_group(const CpuParams& p, int threads) {
  return threads > 1 ? p.gemm_all_cores : p.gemm_one_core;
}

double cpu_gemm_efficiency(const CpuGemmParams& g, DType dtype) {
  return dtype == DType::kFp64 ? g.efficiency_fp64 : g.efficiency_fp32;
}

CpuGemmTerms cpu_gemm_terms(const hw::CpuSpec& cpu, const CpuParams& p, const CpuGemmShape& s, DType dtype,
                            int threads) {
  const double lanes = std::max(1.0, cpu.simd_width_bits / lane_bits(dtype));
  const double e = dtype_bytes(dtype);
  const double a = e * s.m * s.k, b = e * s.k * s.n, c = e * s.m * s.n;
  CpuGemmTerms t;
  t.matrix_vector = s.m <= 1 || s.n <= 1;
  t.threads = t.matrix_vector && !p.matrix_vector_parallel ? 1 : std::max(threads, 1);
  if (t.matrix_vector) {
    t.compute_at_peak_s = 2.0 * s.m * s.n * s.k / cpu_peak_flops(cpu, dtype, t.threads);
  } else {
    const double groups = std::ceil(s.n / p.micro_kernel_columns);
    const double cycles = s.k * groups * panel_cycles(p, s.m, lanes, cpu.fma_units_per_core);
    t.compute_at_peak_s = cycles / (cpu.base_clock_hz * t.threads);
  }
  // A cold B: its first read at DRAM bandwidth (a working set no cache holds), the rest as warm.
  const double no_cache = std::numeric_limits<double>::max() / 4;
  const double warm_b = s.b_from_dram ? 0 : b;
  if (t.matrix_vector) {  // the operands are only read, C only written
    const double cold = s.b_from_dram ? cpu_read_only_transfer_time(p, b, no_cache, t.threads) : 0;
    t.traffic_s = cold + cpu_read_only_transfer_time(p, a + warm_b, a + b + c, t.threads) +
                  cpu_transfer_time(p, 0, c, a + b + c, t.threads);
  } else {  // read A, B and packed B; write packed B and C. The packed panel is sized by the BLAS
            // to stay in cache, so the working set that decides the level is A, B and C.
    const double cold = s.b_from_dram ? cpu_transfer_time(p, b, 0, no_cache, t.threads) : 0;
    t.traffic_s = cold + cpu_transfer_time(p, a + b + warm_b, b + c, a + b + c, t.threads);
  }
  return t;
}

double cpu_gemm_time(const hw::CpuSpec& cpu, const CpuParams& p, const CpuGemmShape& s, DType dtype, int threads) {
  const CpuGemmTerms t = cpu_gemm_terms(cpu, p, s, dtype, threads);
  const CpuGemmParams& g = cpu_gemm_group(p, t.threads);
  const double compute = t.compute_at_peak_s / cpu_gemm_efficiency(g, dtype);
  // A matrix-vector product does one FMA per matrix element it loads: the loads are its traffic,
  // and the FMAs run under them, so the slower of the two bounds it (the traffic, on every CPU
  // whose read bandwidth from L1 is below its FMA rate in bytes).
  if (t.matrix_vector) return g.overhead_s + std::max(compute, g.matrix_vector_factor * t.traffic_s);
  return g.overhead_s + compute + g.traffic_factor * t.traffic_s;
}

}  // namespace exasim::models
