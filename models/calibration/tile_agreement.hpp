#pragma once
// How often the GEMM model picks the tile (and split-K) the library picked, on the measured GEMMs
// whose profile records the library's choice (exasim-bench asks cuBLASLt), and the model's error
// where it agrees and where it does not: the tile choice, not the per-tile cost, is what the
// model misses on mid-sized GEMMs (64-511 rows on the Vidur tables), and this is its evidence.
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/calibration/kernel_fit.hpp"
#include "models/calibration/kernel_sample.hpp"
#include "models/kernel/kernel_params.hpp"

namespace exasim::models {

struct TileAgreement {
  int compared = 0;     // GEMMs with the library's tile recorded
  int same_tile = 0;    // the model's tile has the library's rows and columns
  int same_split = 0;   // and the same split-K factor
  double error_same = 0, error_other = 0;  // mean absolute error of the model's time, each group
};

// A predictor that knows each GEMM's measured time and returns the candidate plan closest to it
// (models::gemm_candidate_plans, closest in ratio); other samples as the tile model predicts
// them. Not a prediction: its error is what would be left if the model chose every tile the way
// the library did, as far as times alone can tell (an optimistic bound, since a closest of
// many candidates also absorbs measurement noise). The gap between it and the tile model is the
// part of the error that is tile choice.
SamplePredictor closest_tile_predictor(const hw::GpuSpec& gpu);

TileAgreement tile_agreement(const hw::GpuSpec& gpu, const KernelParams& p, const std::vector<KernelSample>& samples);

}  // namespace exasim::models
