#pragma once
// Fits named kernel-model parameters (kernel_params.hpp) to measured kernel times by least
// squares on log(predicted / measured), so every sample weighs by its relative error whether it
// took 5 us or 50 ms. Parameters are fitted in log space within physical bounds: fractions in
// (0.05, 1], times in [10 ns, 1 ms], byte counts in [1 KiB, 16 MiB].
// The tile models are piecewise (tile choice, waves), so the cost has many local minima: the
// fit first scores a deterministic Latin-hypercube sample of the box around the start, runs
// Levenberg-Marquardt from the best dozen, and (robust) reweights the squares of the best so
// that the result minimises the mean absolute relative error, the figure reports quote.
#include <functional>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/calibration/kernel_sample.hpp"
#include "models/calibration/least_squares.hpp"
#include "models/kernel/kernel_params.hpp"

namespace exasim::models {

// Predicted time of one sample under parameters p (the tile models, or a baseline).
using SamplePredictor = std::function<double(const KernelParams& p, const KernelSample& s)>;

struct KernelFit {
  KernelParams params;
  std::vector<std::string> fitted;  // names of the parameters that were free
  LeastSquaresReport report;
  double mean_abs_error = 0;        // on the samples fitted, |predicted / measured - 1|
};

// Throws ConfigError naming an unknown parameter (with the list of known ones).
struct KernelFitOptions {
  LeastSquaresOptions least_squares;
  int samples = 64;      // Latin-hypercube points scored before the local fits (0: start only)
  int local_fits = 12;   // Levenberg-Marquardt runs, from the best points
  int robust_rounds = 4; // reweighting rounds towards least absolute error (0: plain squares)
  unsigned seed = 1;
};

KernelFit fit_kernel_params(KernelParams start, const std::vector<std::string>& names,
                            const std::vector<KernelSample>& samples, const SamplePredictor& predict,
                            const KernelFitOptions& options = {});

// The tile-level models (predict_sample) on `gpu`.
SamplePredictor tile_model_predictor(const hw::GpuSpec& gpu);

// The fitted parameters of `names` that ended at a bound of their range (within 0.5%, in the
// written precision): what the measurements did not pin down, and a number not to read as
// measured (e.g. a matrix efficiency of 1 where an L2 term bounds every large GEMM). Each as
// "name (upper)" or "name (lower)"; switches and counts, which are set rather than fitted, never.
std::vector<std::string> parameters_at_bounds(const KernelParams& p, const std::vector<std::string>& names);

// Mean of |predicted / measured - 1| over `samples`.
double mean_abs_error(const KernelParams& p, const std::vector<KernelSample>& samples, const SamplePredictor& predict);

}  // namespace exasim::models
