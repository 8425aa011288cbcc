// The tile-level GEMM model against closed forms: wave quantization, decode GEMMs as weight
// streams, monotonicity, dtype behaviour, and the split-K and tile choices it makes.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <vector>

#include "kernel_test_gpus.hpp"
#include "models/kernel/gemm_model.hpp"
#include "models/kernel/kernel_models.hpp"

using namespace exasim;
using namespace exasim::models;
using exasim::testing::calibrated_params;
using exasim::testing::catalog_gpu;

namespace {

// A 128x128 tile with its CUTLASS configuration.
GemmTile tile_128x128() {
  for (const GemmTile& t : gemm_tile_candidates())
    if (t.bm == 128 && t.bn == 128) return t;
  FAIL("no 128x128 tile");
  return {};
}

}  // namespace

TEST_CASE("gemm: one tile more than a full wave costs about one more wave") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  KernelParams p = calibrated_params(a100);
  p.sustained_clock_fraction = 1;  // waves alone: no power-limit slowdown of the ~1 ms waves
  const GemmTile t = tile_128x128();
  const double sms = a100.sm_count;  // 108
  // M = 128: one row of tiles; N = 108 and 109 tiles of 128 columns. fp32 (A100 runs it on the
  // CUDA cores at 19.5 TFLOP/s) keeps even a 128-row GEMM matrix-bound, so the waves show.
  const double k = 4096;
  const GemmPlan full = gemm_plan_with(a100, p, DType::kFp32, 128, 128 * sms, k, 1, t, 1);
  const GemmPlan plus_one = gemm_plan_with(a100, p, DType::kFp32, 128, 128 * (sms + 1), k, 1, t, 1);
  CHECK(full.tiles == sms);
  CHECK(plus_one.tiles == sms + 1);
  REQUIRE(full.cost.bound == Bound::kMatrix);
  // One wave of 128x128x4096 tiles at the per-SM rate, by hand:
  const double wave = 2.0 * 128 * 128 * k / (a100.matrix_flops_per_sm(DType::kFp32) * p.matrix_efficiency);
  const double fixed = p.launch_overhead_s + p.tile_overhead_s;
  CHECK(full.cost.time_s == exasim::testing::approx(wave + fixed).epsilon(0.01));
  // 109 tiles: the busiest SM runs two; about one more wave (the partial one), not 1/108 more.
  CHECK(plus_one.cost.time_s - full.cost.time_s == exasim::testing::approx(wave).epsilon(0.05));
}

TEST_CASE("gemm: a Stream-K GEMM pays for its padding in MMA N steps along one side, not in whole tiles") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams p = calibrated_params(h100);
  p.smem_operand_mma = p.narrow_output_16bit = 1, p.sustained_clock_fraction = 1;
  p.l2_efficiency = 0.9;  // as the H100 fits: the matrix term bounds these GEMMs
  // H100 (kernels-aic, cuBLAS through TensorRT-LLM): bf16 x 8192 x 8192 at m = 512 89.8 us, at
  // m = 513 91.1 us (+1.5%): the 513th row does not cost a fifth row of 128 x 256 tiles.
  p.stream_k = 1;
  const double t512 = gemm_time(h100, p, DType::kBf16, 512, 8192, 8192).time_s;
  const double t513 = gemm_time(h100, p, DType::kBf16, 513, 8192, 8192).time_s;
  CHECK(t513 >= t512);
  CHECK(t513 / t512 < 1.05);
  // The Stream-K plan of one tile by hand: the SMs share (4 + 16 / 128) rows x 32 columns of
  // 128 x 256 tiles' work (m padded to 528 = 33 steps of 16), each 8192 / 32 K steps of one
  // tile's MMA time per K step.
  GemmTile wide{};
  for (const GemmTile& t : gemm_tile_candidates())
    if (t.bm == 128 && t.bn == 256) wide = t;
  const GemmPlan sk = gemm_plan_with(h100, p, DType::kBf16, 513, 8192, 8192, 1, wide, 1);  // split-K 1: no Stream-K
  CHECK(sk.tiles == 5 * 32);  // CTAs launched: whole tiles
  const double per_step = 2.0 * 128 * 256 * 32 / (h100.matrix_flops_per_sm(DType::kBf16) * p.matrix_efficiency);
  const double work = (528.0 / 128) * 32 / h100.sm_count;  // tiles per SM
  const double steps = std::ceil(work * 8192 / 32);
  // The plan chosen is that one: its MMA time plus the launch and Stream-K's two tile rounds.
  CHECK(t513 == exasim::testing::approx(steps * per_step + p.launch_overhead_s + 2 * p.tile_overhead_s).epsilon(1e-9));
  // Without Stream-K the fifth row of tiles costs its wave share: +20% or more.
  p.stream_k = 0;
  CHECK(gemm_time(h100, p, DType::kBf16, 513, 8192, 8192).time_s / gemm_time(h100, p, DType::kBf16, 512, 8192, 8192).time_s >
        1.2);
}

TEST_CASE("gemm: decode GEMMs stream the weights and scale with weight bytes") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams p = calibrated_params(a100);
  for (double m : {1.0, 8.0, 32.0}) {
    const KernelCost small = gemm_time(a100, p, DType::kBf16, m, 4096, 8192);
    const KernelCost big = gemm_time(a100, p, DType::kBf16, m, 16384, 8192);
    INFO("m = ", m);
    CHECK(small.bound == Bound::kHbm);
    CHECK(big.bound == Bound::kHbm);
    // Beyond the fixed launch cost, time is weight bytes over the achieved HBM bandwidth.
    const double weights_big = 16384.0 * 8192 * 2;
    CHECK(big.time_s - p.launch_overhead_s == exasim::testing::approx(weights_big / (a100.hbm_bandwidth * p.hbm_efficiency)).epsilon(0.05));
    CHECK((big.time_s - p.launch_overhead_s) / (small.time_s - p.launch_overhead_s) == exasim::testing::approx(4).epsilon(0.08));
  }
}

TEST_CASE("gemm: large training GEMMs are matrix-bound near the calibrated efficiency") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams p = calibrated_params(a100);
  const KernelCost c = gemm_time(a100, p, DType::kBf16, 8192, 8192, 8192);
  CHECK(c.bound == Bound::kMatrix);
  CHECK(c.flops == exasim::testing::approx(2.0 * 8192 * 8192 * 8192));
  const double fraction = c.achieved_flops() / (a100.peak(DType::kBf16) * p.matrix_efficiency);
  CHECK(fraction > 0.9);
  CHECK(fraction <= 1.0);
}

TEST_CASE("gemm: time never decreases when any dimension grows") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams p = calibrated_params(a100);
  const std::vector<double> sizes = {1, 2, 7, 16, 33, 64, 65, 100, 128, 129, 200, 256, 300, 512, 777, 1024, 1500,
                                     2048, 3000, 4096, 5120, 8192, 12288, 16384};
  const std::vector<double> others = {64, 1024, 4096, 11008};
  for (int dim = 0; dim < 4; ++dim) {
    for (double a : others) {
      for (double b : others) {
        double previous = 0;
        for (double x : sizes) {
          double m = a, n = b, k = 4096, batch = 1;
          if (dim == 0) m = x, n = a, k = b;
          if (dim == 1) n = x, m = a, k = b;
          if (dim == 2) k = x, m = a, n = b;
          if (dim == 3) batch = std::min(x, 64.0), m = a, n = b, k = 512;
          const double t = gemm_time(a100, p, DType::kBf16, m, n, k, batch).time_s;
          INFO("dim ", dim, " m ", m, " n ", n, " k ", k, " batch ", batch);
          CHECK(t >= previous * (1 - 1e-12));
          previous = t;
        }
      }
    }
  }
}

TEST_CASE("gemm: fp8 is faster than bf16 where compute-bound, not where memory-bound") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  const KernelParams p = calibrated_params(h100);
  const KernelCost bf16 = gemm_time(h100, p, DType::kBf16, 8192, 8192, 8192);
  const KernelCost fp8 = gemm_time(h100, p, DType::kFp8, 8192, 8192, 8192);
  // Compute-bound: the matrix units or the L2/shared memory feeding them (A100-fitted L2
  // efficiency on Hopper), not HBM; fp8 doubles the MMA rate and halves the operand bytes.
  REQUIRE(bf16.bound != Bound::kHbm);
  REQUIRE(bf16.bound != Bound::kLaunch);
  CHECK(fp8.time_s < 0.6 * bf16.time_s);
  CHECK(fp8.time_s > 0.45 * bf16.time_s);
  // Not above the measured fp8 MAMF of an H100 (gpu_specs.yaml: 1402.6 TFLOP/s).
  CHECK(fp8.flops / fp8.time_s < 1402.6e12);
  // Decode (M = 1): both stream the weights; fp8 halves the bytes, not more.
  const KernelCost d16 = gemm_time(h100, p, DType::kBf16, 1, 8192, 8192);
  const KernelCost d8 = gemm_time(h100, p, DType::kFp8, 1, 8192, 8192);
  CHECK(d16.bound == Bound::kHbm);
  CHECK(d8.bound == Bound::kHbm);
  const double l = p.launch_overhead_s;
  CHECK((d8.time_s - l) / (d16.time_s - l) == exasim::testing::approx(0.5).epsilon(0.1));
  // A100 has no fp8 matrix path: fp8 weights run on the bf16 units (weight-only kernels), so a
  // compute-bound fp8 GEMM is no faster than bf16 there.
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams pa = calibrated_params(a100);
  CHECK(gemm_time(a100, pa, DType::kFp8, 8192, 8192, 8192).time_s ==
        exasim::testing::approx(gemm_time(a100, pa, DType::kBf16, 8192, 8192, 8192).time_s).epsilon(0.05));
}

TEST_CASE("gemm: split-K is chosen when few output tiles leave the SMs idle") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams p = calibrated_params(a100);
  // 256 x 256 outputs with K = 16384: 4 tiles of 128x128 for 108 SMs.
  const GemmPlan skinny = gemm_plan(a100, p, DType::kBf16, 256, 256, 16384);
  CHECK(skinny.split_k > 1);
  const GemmPlan no_split = gemm_plan_with(a100, p, DType::kBf16, 256, 256, 16384, 1, skinny.tile, 1);
  CHECK(skinny.cost.time_s < no_split.cost.time_s);
  // A large square GEMM has plenty of tiles and does not split.
  CHECK(gemm_plan(a100, p, DType::kBf16, 8192, 8192, 8192).split_k == 1);
}

TEST_CASE("gemm: split-K writes fp32 partial sums, and a second kernel reads them back after it") {
  // cuBLAS's split-K GEMMs on Ampere are two kernels: the sliced GEMM, which writes s fp32 partial
  // products of the whole output, then a reduction that reads them and writes the result. With
  // little math (K = 256) both are bound by those bytes at the achieved HBM rate, one after the
  // other: at least two launches, s M N 4 B written, then s M N 4 + M N 2 B moved again.
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams p = calibrated_params(a100);
  const double m = 2048, n = 2048, s = 8;
  const GemmPlan split = gemm_plan_with(a100, p, DType::kBf16, m, n, 256, 1, GemmTile{128, 128, 4, 2, 4, 1}, int(s));
  REQUIRE(split.split_k == 8);
  const double rate = a100.hbm_bandwidth * p.hbm_efficiency;
  const double partials = s * m * n * 4;
  const double lower = 2 * p.launch_overhead_s + split.waves * p.tile_overhead_s + partials / rate +
                       (partials + m * n * 2) / rate;
  CHECK(split.cost.time_s >= lower);
  CHECK(split.cost.time_s <= 1.1 * lower);  // plus reading A and B, and what does not overlap
}

TEST_CASE("gemm: batched GEMM of b products costs like one GEMM of b times the tiles") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams p = calibrated_params(a100);
  const KernelCost one = gemm_time(a100, p, DType::kBf16, 2048, 2048, 128, 1);
  const KernelCost many = gemm_time(a100, p, DType::kBf16, 2048, 2048, 128, 64);
  CHECK(many.flops == exasim::testing::approx(64 * one.flops));
  CHECK(many.time_s > 20 * (one.time_s - p.launch_overhead_s));
  CHECK(many.time_s < 64 * one.time_s);
}

TEST_CASE("gemm: compute beyond the power window runs at the sustained clock") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  KernelParams p = calibrated_params(a100);
  p.sustained_clock_fraction = 0.9;
  p.power_window_s = 200e-6;
  KernelParams burst = p;
  burst.sustained_clock_fraction = 1;
  const GemmTile t = tile_128x128();
  // 128 x (128 x 108) x K in fp32 on the CUDA cores: one wave, matrix-bound, ~0.95 ms at K = 4096.
  const double n = 128 * a100.sm_count;
  const GemmPlan fast = gemm_plan_with(a100, burst, DType::kFp32, 128, n, 4096, 1, t, 1);
  const GemmPlan slow = gemm_plan_with(a100, p, DType::kFp32, 128, n, 4096, 1, t, 1);
  REQUIRE(fast.cost.bound == Bound::kMatrix);
  const double fixed = p.launch_overhead_s + p.tile_overhead_s;
  const double work = fast.cost.time_s - fixed;
  REQUIRE(work > p.power_window_s);
  // By hand: the first 200 us at burst clock, the rest 1/0.9 longer.
  CHECK(slow.cost.time_s - fixed == exasim::testing::approx(200e-6 + (work - 200e-6) / 0.9).epsilon(1e-6));
  // Under sustained load (a training step) the whole compute time is at the sustained clock.
  KernelParams loaded = p;
  loaded.sustained_load = true;
  const GemmPlan sustained = gemm_plan_with(a100, loaded, DType::kFp32, 128, n, 4096, 1, t, 1);
  CHECK(sustained.cost.time_s - fixed == exasim::testing::approx(work / 0.9).epsilon(1e-6));
  // A kernel shorter than the window is not slowed, and HBM-bound decode GEMMs never are.
  const GemmPlan short_fast = gemm_plan_with(a100, burst, DType::kFp32, 128, n, 256, 1, t, 1);
  const GemmPlan short_slow = gemm_plan_with(a100, p, DType::kFp32, 128, n, 256, 1, t, 1);
  REQUIRE(short_fast.cost.time_s - fixed < p.power_window_s);
  CHECK(short_slow.cost.time_s == exasim::testing::approx(short_fast.cost.time_s));
  CHECK(gemm_time(a100, loaded, DType::kBf16, 1, 8192, 8192).time_s ==
        exasim::testing::approx(gemm_time(a100, burst, DType::kBf16, 1, 8192, 8192).time_s));
}

// Hopper's large GEMMs against the measured maximum achievable matmul rate at the MAMF finder's
// best shape (gpu_specs.yaml, ml-engineering, H100 SXM: bf16 794.5 TFLOP/s at 2048x2048x13312,
// fp8 1402.6). cuBLAS's sm90 kernels multicast each B slice to a two-CTA cluster; without that
// the L2 term capped bf16 at 642 TFLOP/s (0.81 x MAMF) with the A100-fitted L2 efficiency.
TEST_CASE("gemm: an H100 GEMM at the MAMF shape runs near the measured MAMF and not above it") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  const KernelParams p = KernelParams::defaults_for(h100);
  for (const auto& [dtype, mamf] : {std::pair{DType::kBf16, 794.5e12}, std::pair{DType::kFp8, 1402.6e12}}) {
    CAPTURE(dtype_name(dtype));
    const KernelCost c = gemm_time(h100, p, dtype, 2048, 2048, 13312);
    const double rate = c.flops / c.time_s;
    CHECK(rate <= mamf);
    CHECK(rate > 0.85 * mamf);
  }
}
