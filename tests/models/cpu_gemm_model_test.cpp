#include "models/cpu/cpu_gemm_model.hpp"

#include <doctest/doctest.h>

#include "approx.hpp"

#include "hw/error.hpp"
#include "models/cpu/cpu_memory_model.hpp"

using namespace exasim::models;
using exasim::DType;

namespace {

exasim::hw::CpuSpec spec() {
  exasim::hw::CpuSpec s;
  s.name = "test";
  s.cores = 2;
  s.base_clock_hz = 2.5e9;
  s.simd_width_bits = 512;
  s.fma_units_per_core = 2;
  s.memory_bandwidth = 100e9;
  s.l3_bytes = 32e6;
  return s;
}

CpuParams params() {
  CpuParams p = CpuParams::defaults_for(spec());
  p.gemm_one_core = {0.9, 0.8, 1.2, 1e-6, 1.1};
  p.gemm_all_cores = {0.8, 0.7, 1.0, 3e-6, 1.0};
  p.all_threads = 2;
  return p;
}

}  // namespace

TEST_CASE("cpu gemm: peak is threads x FMA units x lanes x 2 x clock") {
  // One core: 2 FMA x 16 fp32 lanes x 2 FLOP x 2.5 GHz = 160 GFLOP/s; fp64 has 8 lanes.
  CHECK(cpu_peak_flops(spec(), DType::kFp32, 1) == exasim::testing::approx(160e9));
  CHECK(cpu_peak_flops(spec(), DType::kFp64, 2) == exasim::testing::approx(160e9));
  CHECK(cpu_peak_flops(spec(), DType::kBf16, 1) == exasim::testing::approx(160e9));  // computed in fp32 lanes
  CHECK_THROWS_AS(cpu_peak_flops(spec(), DType::kFp8, 1), exasim::ConfigError);
}

TEST_CASE("cpu gemm: time is overhead + padded FLOPs at efficiency + packing traffic") {
  const CpuParams p = params();
  const CpuGemmShape s{1024, 1024, 1024};
  const double flops = 2.0 * 1024 * 1024 * 1024;
  const double a = 4.0 * 1024 * 1024;  // each operand 4 MiB in fp32
  // Read A, B and packed B; write packed B and C; the working set is A, B and C.
  const double traffic = cpu_transfer_time(p, 3 * a, 2 * a, 3 * a, 1);
  CHECK(cpu_gemm_time(spec(), p, s, DType::kFp32, 1) == exasim::testing::approx(1e-6 + flops / (160e9 * 0.9) + 1.2 * traffic));
}

TEST_CASE("cpu gemm: a remainder of rows is one more pass of the micro-kernel over B") {
  const CpuParams p = params();
  // fp32 on 16 lanes: 12 rows are a half-vector pass and a quarter-vector pass (8 + 4), each as
  // long as a whole-vector pass (FMA-bound: 4 FMAs per k step on 2 FMA units, 2 cycles).
  const auto t8 = cpu_gemm_terms(spec(), p, {8, 512, 512}, DType::kFp32, 1);
  const auto t12 = cpu_gemm_terms(spec(), p, {12, 512, 512}, DType::kFp32, 1);
  CHECK(t8.compute_at_peak_s == exasim::testing::approx(512.0 * 128 * 2 / 2.5e9));
  CHECK(t12.compute_at_peak_s == exasim::testing::approx(2 * t8.compute_at_peak_s));
  // With two load ports a one-vector pass is load-bound: (1 + 4) / 2 = 2.5 cycles, not 2.
  CpuParams two = p;
  two.load_ports = 2;
  CHECK(cpu_gemm_terms(spec(), two, {8, 512, 512}, DType::kFp32, 1).compute_at_peak_s ==
        exasim::testing::approx(512.0 * 128 * 2.5 / 2.5e9));
  // Full panels of 3 vectors run at the FMA peak.
  const auto big = cpu_gemm_terms(spec(), p, {480, 512, 512}, DType::kFp32, 1);
  CHECK(big.compute_at_peak_s == exasim::testing::approx(2.0 * 480 * 512 * 512 / 160e9));
}

TEST_CASE("cpu gemm: rows are padded to whole SIMD vectors") {
  const CpuParams p = params();
  // m = 8 in fp32 fills half of a 16-lane vector: the compute term is that of m = 16.
  const auto t8 = cpu_gemm_terms(spec(), p, {8, 512, 512}, DType::kFp32, 1);
  const auto t16 = cpu_gemm_terms(spec(), p, {16, 512, 512}, DType::kFp32, 1);
  CHECK(t8.compute_at_peak_s == exasim::testing::approx(t16.compute_at_peak_s));
  // In fp64 a vector has 8 lanes: m = 8 is not padded.
  const auto d8 = cpu_gemm_terms(spec(), p, {8, 512, 512}, DType::kFp64, 1);
  CHECK(d8.compute_at_peak_s == exasim::testing::approx(2.0 * 8 * 512 * 512 / 80e9));
}

TEST_CASE("cpu gemm: a matrix-vector product streams its matrix once, read-only, on one thread unless the BLAS spreads it") {
  CpuParams p = params();
  const CpuGemmShape s{1, 4096, 4096};
  const auto t = cpu_gemm_terms(spec(), p, s, DType::kFp32, 2);
  CHECK(t.matrix_vector);
  CHECK(t.threads == 1);  // Eigen 3.4
  const double bytes = 4.0 * (4096 + 4096.0 * 4096);
  CHECK(t.traffic_s == exasim::testing::approx(cpu_transfer_time(p, bytes, 4.0 * 4096, bytes + 4.0 * 4096, 1)));
  // Its FMAs run under its loads: the larger of the two, not their sum (here the traffic).
  REQUIRE(t.compute_at_peak_s / 0.9 < 1.1 * t.traffic_s);
  CHECK(cpu_gemm_time(spec(), p, s, DType::kFp32, 2) == exasim::testing::approx(1e-6 + 1.1 * t.traffic_s));
  // With read-only bandwidths measured at half of `read`, the operands take twice as long; C's
  // write (4096 floats) does not change.
  CpuParams half = p;
  for (auto& level : p.one_core) level.read_only = level.read / 2;
  for (auto& level : half.one_core) level.read /= 2;
  CHECK(cpu_gemm_terms(spec(), p, s, DType::kFp32, 1).traffic_s ==
        exasim::testing::approx(cpu_transfer_time(half, bytes, 4.0 * 4096, bytes + 4.0 * 4096, 1)));
  p.matrix_vector_parallel = true;
  CHECK(cpu_gemm_terms(spec(), p, s, DType::kFp32, 2).threads == 2);
}

TEST_CASE("cpu gemm: more work never takes less time, and more cores help a large product") {
  const CpuParams p = params();
  double last = 0;
  for (double n : {64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0}) {
    const double t = cpu_gemm_time(spec(), p, {n, n, n}, DType::kFp64, 1);
    CHECK(t > last);
    last = t;
  }
  CHECK(cpu_gemm_time(spec(), p, {2048, 2048, 2048}, DType::kFp32, 2) <
        0.6 * cpu_gemm_time(spec(), p, {2048, 2048, 2048}, DType::kFp32, 1));
}
