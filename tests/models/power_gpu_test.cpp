// GPU power from unit activity, and DVFS under a cap, against hand calculations.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <string>

#include "hw/catalog.hpp"
#include "models/power/dvfs.hpp"
#include "models/power/gpu_power.hpp"

using namespace exasim;
using namespace exasim::models;

namespace {

hw::GpuSpec gpu(const std::string& name) { return hw::Catalog::load(std::string(EXASIM_SOURCE_DIR) + "/configs").gpu(name); }

}  // namespace

TEST_CASE("idle power at zero activity, TDP for a dense GEMM at the top clock") {
  for (const char* name : {"A100-SXM4-80GB", "H100-SXM5-80GB", "MI300X"}) {
    const hw::GpuSpec g = gpu(name);
    CHECK(gpu_power_w(g, UnitActivity{}) == exasim::testing::approx(g.idle_power_w));
    CHECK(gpu_power_w(g, kDenseGemm) == exasim::testing::approx(g.tdp_w));
    // Every unit flat out would draw more: that is when the power limit lowers the clock.
    CHECK(gpu_power_w(g, UnitActivity{1, 1, 1, 1}) > g.tdp_w);
    CHECK(gpu_power_w(g, 0.0) == exasim::testing::approx(g.idle_power_w));
  }
}

TEST_CASE("the per-unit split of A100 80GB by hand") {
  const hw::GpuSpec g = gpu("A100-SXM4-80GB");
  const GpuPowerSplit s = power_split(g);
  // HBM: 2039 GB/s x 8 bit x 3.9 pJ/bit = 63.6 W; links: 2 x 300 GB/s x 8 x 2 pJ/bit = 9.6 W.
  CHECK(s.hbm_w == exasim::testing::approx(2039e9 * 8 * 3.9e-12));
  CHECK(s.link_w == exasim::testing::approx(2 * 300e9 * 8 * 2e-12));
  const double range = g.tdp_w - g.idle_power_w;
  CHECK(s.vector_w == exasim::testing::approx(0.25 * (range - s.hbm_w - s.link_w)));
  // A dense GEMM (80% matrix, 20% HBM, SMs busy) draws TDP: 60 + 0.8 M + V + 0.2 H = 400 W.
  CHECK(s.matrix_w == exasim::testing::approx((range - s.vector_w - 0.2 * s.hbm_w) / 0.8));
  // A GEMM at 70% of peak with 10% HBM: idle + 0.7 matrix + vector + 0.1 HBM.
  CHECK(gpu_power_w(g, {0.7, 1, 0.1, 0}) == exasim::testing::approx(g.idle_power_w + 0.7 * s.matrix_w + s.vector_w + 0.1 * s.hbm_w));
}

TEST_CASE("DVFS: voltage flat below the knee, dynamic power as f V^2") {
  const DvfsCurve c;
  CHECK(c.at(0.3).voltage == exasim::testing::approx(0.7));
  CHECK(c.at(1.0).voltage == exasim::testing::approx(1.0));
  CHECK(c.at(0.75).voltage == exasim::testing::approx(0.85));
  CHECK(c.at(0.01).frequency == exasim::testing::approx(c.min_frequency));  // clamped to the lowest clock
  const hw::GpuSpec g = gpu("H100-SXM5-80GB");
  const GpuPowerSplit s = power_split(g);
  // Vector units busy at 75% clock: f V^2 = 0.75 x 0.85^2.
  CHECK(gpu_power_w(g, {0, 1, 0, 0}, c.at(0.75)) == exasim::testing::approx(g.idle_power_w + s.vector_w * 0.75 * 0.85 * 0.85));
}

TEST_CASE("a capped kernel never exceeds its budget, keeps its clock when under it, slows when over") {
  const hw::GpuSpec g = gpu("H100-SXM5-80GB");
  const KernelActivity gemm{{0.7, 1, 0.2, 0}, 0.9};
  const CappedKernel free = cap_kernel(g, gemm, g.tdp_w);
  CHECK(free.clock.frequency == 1);
  CHECK(free.time_factor == 1);
  CHECK(free.power_w > 600);
  for (double budget : {500.0, 400.0, 300.0, 250.0}) {
    const CappedKernel k = cap_kernel(g, gemm, budget);
    INFO("budget ", budget);
    CHECK(k.power_w <= budget + 1e-9);
    CHECK(k.clock.frequency < 1);
    CHECK(k.time_factor > 1);
    // At the chosen clock the power is within a hair of the budget (bisection to 1e-6).
    CHECK(k.power_w == exasim::testing::approx(budget).epsilon(1e-3));
  }
  // Lower budgets, lower clocks.
  CHECK(cap_kernel(g, gemm, 300).clock.frequency < cap_kernel(g, gemm, 500).clock.frequency);
  // A memory-bound kernel barely slows: its time is set by HBM, not the SM clock.
  const KernelActivity stream{{0.01, 1, 0.9, 0}, 0.01};
  CHECK(cap_kernel(g, stream, 300).time_factor < 1.05);
}

TEST_CASE("a kernel simulated at TDP keeps its time there and slows only below it") {
  const hw::GpuSpec g = gpu("A100-SXM4-80GB");
  const double reserve = power_split(g).link_w;
  const KernelActivity hot{{0.9, 1, 0.3, 0}, 1};  // draws more than TDP at the top clock
  REQUIRE(gpu_power_w(g, hot.activity) > g.tdp_w);
  const CappedKernel at_tdp = limit_kernel(g, hot, g.tdp_w, reserve);
  CHECK(at_tdp.time_factor == 1);                       // its calibrated time already includes throttling
  CHECK(at_tdp.power_w <= g.tdp_w - reserve + 1e-9);    // and it reports at most the limit
  const CappedKernel capped = limit_kernel(g, hot, 300, reserve);
  CHECK(capped.time_factor > 1);
  CHECK(capped.power_w <= 300 - reserve + 1e-9);
  // Relative to TDP: the ratio of the two operating points' stretch.
  CHECK(capped.time_factor == exasim::testing::approx(cap_kernel(g, hot, 300 - reserve).time_factor /
                                              cap_kernel(g, hot, g.tdp_w - reserve).time_factor));
}

TEST_CASE("the cap floor: the busiest kernel at the lowest clock fits it") {
  const hw::GpuSpec g = gpu("A100-SXM4-80GB");
  const double floor = power_cap_floor_w(g);
  CHECK(floor > g.idle_power_w);
  CHECK(floor < g.tdp_w);
  const CappedKernel k = cap_kernel(g, {{1, 1, 1, 0}, 1}, floor - power_split(g).link_w);
  CHECK(k.power_w <= floor - power_split(g).link_w + 1e-9);
}
