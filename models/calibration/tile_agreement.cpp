#include "models/calibration/tile_agreement.hpp"

#include <cmath>

#include "models/kernel/gemm_model.hpp"

namespace exasim::models {

SamplePredictor closest_tile_predictor(const hw::GpuSpec& gpu) {
  const SamplePredictor model = tile_model_predictor(gpu);
  return [&gpu, model](const KernelParams& p, const KernelSample& s) {
    if (s.kind != SampleKind::kGemm || !(s.time_s > 0)) return model(p, s);
    double best = model(p, s), best_gap = std::abs(std::log(best / s.time_s));
    for (const GemmPlan& g : gemm_candidate_plans(gpu, p, s.dtype, s.m, s.n, s.k, s.batch)) {
      const double gap = std::abs(std::log(g.cost.time_s / s.time_s));
      if (gap < best_gap) best = g.cost.time_s, best_gap = gap;
    }
    return best;
  };
}

TileAgreement tile_agreement(const hw::GpuSpec& gpu, const KernelParams& p, const std::vector<KernelSample>& samples) {
  TileAgreement a;
  for (const KernelSample& s : samples) {
    if (s.kind != SampleKind::kGemm || s.library_tile_m <= 0 || s.library_tile_n <= 0 || !(s.time_s > 0)) continue;
    const GemmPlan g = gemm_plan(gpu, p, s.dtype, s.m, s.n, s.k, s.batch);
    const double error = std::abs(g.cost.time_s / s.time_s - 1);
    const bool same = g.tile.bm == s.library_tile_m && g.tile.bn == s.library_tile_n;
    ++a.compared;
    if (same) {
      ++a.same_tile;
      if (s.library_split_k <= 0 || g.split_k == s.library_split_k) ++a.same_split;
      a.error_same += error;
    } else {
      a.error_other += error;
    }
  }
  if (a.same_tile > 0) a.error_same /= a.same_tile;
  if (a.compared > a.same_tile) a.error_other /= a.compared - a.same_tile;
  return a;
}

}  // namespace exasim::models
