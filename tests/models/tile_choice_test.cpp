// The GEMM model's tile choice against a library's: the candidate plans the search weighs, the
// agreement with a recorded library tile, and the closest-tile bound that `exasim calibrate`
// reports beside the model (how much of the error is the choice of tile rather than its cost).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "kernel_test_gpus.hpp"
#include "models/calibration/kernel_fit.hpp"
#include "models/calibration/tile_agreement.hpp"
#include "models/kernel/gemm_model.hpp"

using namespace exasim;
using namespace exasim::models;
using exasim::testing::calibrated_params;
using exasim::testing::catalog_gpu;

namespace {

KernelSample gemm_sample(double m, double n, double k, double time_s) {
  KernelSample s;
  s.kind = SampleKind::kGemm, s.op = "gemm", s.source = "synthetic", s.m = m, s.n = n, s.k = k, s.tokens = m;
  s.time_s = time_s;
  return s;
}

const GemmTile& tile_of(int bm, int bn) {
  for (const GemmTile& t : gemm_tile_candidates())
    if (t.bm == bm && t.bn == bn) return t;
  FAIL("no candidate tile " << bm << "x" << bn);
  return gemm_tile_candidates().front();
}

}  // namespace

TEST_CASE("gemm candidate plans: the model's own plan is among them and none beats the fastest") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams p = calibrated_params(a100);
  for (double m : {8.0, 96.0, 192.0, 1024.0, 8192.0})
    for (double n : {1024.0, 8192.0})
      for (double k : {1024.0, 16384.0}) {
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        const GemmPlan chosen = gemm_plan(a100, p, DType::kBf16, m, n, k);
        const auto plans = gemm_candidate_plans(a100, p, DType::kBf16, m, n, k);
        REQUIRE(!plans.empty());
        const bool present = std::any_of(plans.begin(), plans.end(), [&](const GemmPlan& g) {
          return g.tile.bm == chosen.tile.bm && g.tile.bn == chosen.tile.bn && g.split_k == chosen.split_k &&
                 g.cost.time_s == chosen.cost.time_s;
        });
        CHECK(present);
        double fastest = plans.front().cost.time_s;
        for (const GemmPlan& g : plans) fastest = std::min(fastest, g.cost.time_s);
        CHECK(fastest <= chosen.cost.time_s);
      }
}

TEST_CASE("closest tile: a GEMM timed on a tile the heuristic passes over is matched, never worse than the model") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams p = calibrated_params(a100);
  const SamplePredictor model = tile_model_predictor(a100);
  const SamplePredictor closest = closest_tile_predictor(a100);
  // 192 x 8192 x 4096 (Llama-3-70B attention output, TP 2): the heuristic keeps 128-row tiles
  // above 128 rows (256 CTAs, 3 per SM); a 64 x 128 tile needs 192 CTAs, 2 per SM, a third
  // less time. A measurement on that tile is what the closest-tile bound recovers.
  const GemmPlan chosen = gemm_plan(a100, p, DType::kBf16, 192, 8192, 4096);
  REQUIRE(chosen.tile.bm == 128);
  const double on_64x128 = gemm_plan_with(a100, p, DType::kBf16, 192, 8192, 4096, 1, tile_of(64, 128), 1).cost.time_s;
  const KernelSample s = gemm_sample(192, 8192, 4096, on_64x128);
  CHECK(std::abs(model(p, s) / s.time_s - 1) > 0.2);
  CHECK(closest(p, s) == on_64x128);
  // Any measured time: the closest candidate is at least as near as the model's own choice.
  for (double m : {16.0, 200.0, 2048.0})
    for (double factor : {0.6, 0.95, 1.4}) {
      const double predicted = gemm_plan(a100, p, DType::kBf16, m, 4096, 4096).cost.time_s;
      const KernelSample x = gemm_sample(m, 4096, 4096, predicted * factor);
      CAPTURE(m);
      CAPTURE(factor);
      CHECK(std::abs(std::log(closest(p, x) / x.time_s)) <= std::abs(std::log(model(p, x) / x.time_s)));
    }
}

TEST_CASE("tile agreement: counts the GEMMs whose recorded library tile the model picks, with each group's error") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams p = calibrated_params(a100);
  const GemmPlan chosen = gemm_plan(a100, p, DType::kBf16, 4096, 4096, 4096);
  KernelSample agree = gemm_sample(4096, 4096, 4096, chosen.cost.time_s * 1.10);  // measured 10% above the model
  agree.library_tile_m = chosen.tile.bm, agree.library_tile_n = chosen.tile.bn, agree.library_split_k = chosen.split_k;
  KernelSample differ = gemm_sample(4096, 4096, 4096, chosen.cost.time_s * 0.80);
  differ.library_tile_m = 16, differ.library_tile_n = 128;
  KernelSample unrecorded = gemm_sample(4096, 4096, 4096, chosen.cost.time_s);  // no library tile: not compared
  const TileAgreement a = tile_agreement(a100, p, {agree, differ, unrecorded});
  CHECK(a.compared == 2);
  CHECK(a.same_tile == 1);
  CHECK(a.same_split == 1);
  CHECK(a.error_same == doctest::Approx(1 - 1 / 1.10));
  CHECK(a.error_other == doctest::Approx(1 / 0.80 - 1));
}
