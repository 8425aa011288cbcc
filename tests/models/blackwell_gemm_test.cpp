// Blackwell GEMMs (tcgen05: operands read from shared memory by the tensor cores, CTA-pair tiles)
// against the measured maximum achievable matmul rate, and the NVFP4 operand bytes.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "kernel_test_gpus.hpp"
#include "models/kernel/gemm_model.hpp"
#include "models/kernel/kernel_models.hpp"

using namespace exasim;

namespace {

// An 8192^3 GEMM of each dtype on `gpu` (family defaults) against its measured MAMF: not above it,
// within 20% of it (the Ampere smem-fragment bound gave 0.45 x MAMF on B200), matrix-bound on a
// CTA-pair tile.
void check_near_mamf(const hw::GpuSpec& g, std::initializer_list<std::pair<DType, double>> measured) {
  const models::KernelParams p = models::KernelParams::defaults_for(g);
  for (const auto& [dtype, mamf] : measured) {
    CAPTURE(dtype_name(dtype));
    const models::GemmPlan plan = models::gemm_plan(g, p, dtype, 8192, 8192, 8192);
    const double rate = plan.cost.flops / plan.cost.time_s;
    CHECK(rate <= mamf);
    CHECK(rate > 0.8 * mamf);
    CHECK(plan.cost.bound == models::Bound::kMatrix);
    CHECK(plan.tile.sms == 2);
  }
}

}  // namespace

TEST_CASE("gemm: a large B200 GEMM runs near the measured MAMF and not above it") {
  // gpu_specs.yaml (ml-engineering MAMF finder, B200): bf16 1745.0, fp8 3432.5 TFLOP/s.
  check_near_mamf(testing::catalog_gpu("B200"), {{DType::kBf16, 1745.0e12}, {DType::kFp8, 3432.5e12}});
}

// The same family's GPUs reach different fractions of their peaks: GB200's MAMF is 0.729 of its
// 2500 TFLOP/s bf16 peak, B200's 0.776 of 2250 (gpu_specs.yaml). Scaling GB200 by B200's fraction
// (the family default before measured_matmul) put its large GEMMs at 1940 TFLOP/s, above what
// GB200 measures.
TEST_CASE("gemm: a large GB200 GEMM runs near GB200's own measured MAMF, not B200's fraction of its peak") {
  const hw::GpuSpec g = testing::catalog_gpu("GB200");
  check_near_mamf(g, {{DType::kBf16, 1822.0e12}, {DType::kFp8, 3615.6e12}});
  // Without its measurement the GPU falls back to the family's fraction (0.776, B200 rounded), 6.5% faster.
  hw::GpuSpec unmeasured = g;
  unmeasured.measured_matmul_flops = {};
  const double family = models::KernelParams::defaults_for(unmeasured).matrix_efficiency;
  CHECK(family / models::KernelParams::defaults_for(g).matrix_efficiency == exasim::testing::approx(0.776 / (1822.0 / 2500)).epsilon(1e-9));
}

TEST_CASE("gemm: NVFP4 operands carry one e4m3 scale per 16 values") {
  const hw::GpuSpec g = testing::catalog_gpu("B200");
  const models::KernelParams p = models::KernelParams::defaults_for(g);
  // One token through a 8192 x 8192 weight: the weight read decides; 4.5 bit per weight.
  const models::GemmPlan fp4 = models::gemm_plan(g, p, DType::kFp4, 1, 8192, 8192);
  const double weights = 8192.0 * 8192 * 4.5 / 8;
  CHECK(fp4.cost.bytes == exasim::testing::approx(weights + 8192 * 4.5 / 8 + 8192 * 0.5).epsilon(1e-9));
  // Compute-bound: the fp4 tensor rate is twice fp8's (B200 datasheet 9 vs 4.5 PFLOP/s dense).
  const double t4 = models::gemm_time(g, p, DType::kFp4, 8192, 8192, 8192).time_s;
  const double t8 = models::gemm_time(g, p, DType::kFp8, 8192, 8192, 8192).time_s;
  CHECK(t8 / t4 == exasim::testing::approx(2).epsilon(0.05));
}
