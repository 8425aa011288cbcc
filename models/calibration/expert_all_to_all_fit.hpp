#pragma once
// Fits one expert all-to-all phase's constants (models/collective/expert_all_to_all.hpp) to
// measured calls of one GPU: the two rates by a search over a log grid (the time is piecewise in
// them: an SM's rate until the link's is reached), the five linear costs at each grid point by
// least squares on relative residuals with none negative. Whole shapes (hidden, top-k, experts)
// are held out, as a new MoE model's would be, and predicted without refitting.
#include <string>
#include <vector>

#include "models/collective/expert_all_to_all.hpp"

namespace exasim::models {

struct ExpertAllToAllSample {
  ExpertAllToAllKernel kernel = ExpertAllToAllKernel::kDeepEpNormal;
  ExpertAllToAllPhase phase = ExpertAllToAllPhase::kDispatch;
  ExpertExchange exchange;
  double measured_s = 0;
  std::string source;  // file
  int line = 0;
};

// Whether the sample's shape (hidden, topk, experts) is held out under `fraction` and `seed`.
bool expert_shape_held_out(const ExpertExchange& x, double fraction, unsigned seed);

struct ExpertAllToAllFit {
  ExpertAllToAllCosts costs;
  std::vector<ExpertAllToAllSample> fit_set, held_out;
};

// Fits `samples` (all of one kernel and phase, on a GPU of `device_sms` SMs). Throws ConfigError
// when they mix kernels or phases, or are too few for the seven constants.
ExpertAllToAllFit fit_expert_all_to_all(const std::vector<ExpertAllToAllSample>& samples, int device_sms,
                                        double held_out_fraction, unsigned seed);

// Mean absolute relative error of `costs` on `samples` (0 when there are none).
double expert_all_to_all_error(const std::vector<ExpertAllToAllSample>& samples, int device_sms,
                               const ExpertAllToAllCosts& costs);

}  // namespace exasim::models
