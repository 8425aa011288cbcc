// Blackwell GEMMs (tcgen05: operands read from shared memory by the tensor cores, CTA-pair tiles)
// against the measured maximum achievable matmul rate, and the NVFP4 operand bytes.
#include <doctest/doctest.h>

#include "kernel_test_gpus.hpp"
#include "models/kernel/gemm_model.hpp"
#include "models/kernel/kernel_models.hpp"

using namespace exasim;

TEST_CASE("gemm: a large B200 GEMM runs near the measured MAMF and not above it") {
  const hw::GpuSpec g = testing::catalog_gpu("B200");
  const models::KernelParams p = models::KernelParams::defaults_for(g);
  // gpu_specs.yaml (ml-engineering MAMF finder, B200): bf16 1745.0, fp8 3432.5 TFLOP/s.
  for (const auto& [dtype, mamf] : {std::pair{DType::kBf16, 1745.0e12}, std::pair{DType::kFp8, 3432.5e12}}) {
    CAPTURE(dtype_name(dtype));
    const models::GemmPlan plan = models::gemm_plan(g, p, dtype, 8192, 8192, 8192);
    const double rate = plan.cost.flops / plan.cost.time_s;
    CHECK(rate <= mamf);
    CHECK(rate > 0.8 * mamf);  // the Ampere smem-fragment bound gave 0.45 x MAMF here
    CHECK(plan.cost.bound == models::Bound::kMatrix);
    CHECK(plan.tile.sms == 2);  // a CTA-pair tile
  }
}

TEST_CASE("gemm: NVFP4 operands carry one e4m3 scale per 16 values") {
  const hw::GpuSpec g = testing::catalog_gpu("B200");
  const models::KernelParams p = models::KernelParams::defaults_for(g);
  // One token through a 8192 x 8192 weight: the weight read decides; 4.5 bit per weight.
  const models::GemmPlan fp4 = models::gemm_plan(g, p, DType::kFp4, 1, 8192, 8192);
  const double weights = 8192.0 * 8192 * 4.5 / 8;
  CHECK(fp4.cost.bytes == doctest::Approx(weights + 8192 * 4.5 / 8 + 8192 * 0.5).epsilon(1e-9));
  // Compute-bound: the fp4 tensor rate is twice fp8's (B200 datasheet 9 vs 4.5 PFLOP/s dense).
  const double t4 = models::gemm_time(g, p, DType::kFp4, 8192, 8192, 8192).time_s;
  const double t8 = models::gemm_time(g, p, DType::kFp8, 8192, 8192, 8192).time_s;
  CHECK(t8 / t4 == doctest::Approx(2).epsilon(0.05));
}
