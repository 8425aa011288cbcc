#pragma once
// Fits one expert all-to-all phase's constants (models/collective/expert_all_to_all.hpp) to
// measured calls of one GPU: the two rates by a search over a log grid (the time is piecewise in
// them: the senders' rate until the link's is reached), the five linear costs at each grid point
// by least squares on relative residuals with none negative (a term the same on every call, as
// the per-expert and per-row costs of a table with one layer shape, left out: it would be the
// floor's). Held out and predicted without
// refitting: whole shapes (hidden, top-k, experts), as a new MoE model's would be; where a table
// has one shape (TensorRT-LLM's NVLink all-to-all), whole token counts.
#include <string>
#include <vector>

#include "models/collective/expert_all_to_all.hpp"

namespace exasim::models {

struct ExpertAllToAllSample {
  ExpertAllToAllKey key;
  ExpertExchange exchange;
  double measured_s = 0;
  std::string source;  // file
  int line = 0;
};

// Whether the sample is held out under `fraction` and `seed`: its shape (hidden, topk, experts),
// and for the NVLink kernels its token count.
bool expert_sample_held_out(const ExpertAllToAllSample& s, double fraction, unsigned seed);

struct ExpertAllToAllFit {
  ExpertAllToAllCosts costs;
  std::vector<ExpertAllToAllSample> fit_set, held_out;
};

// Fits `samples` (all of one key, on a GPU of `device_sms` SMs). Throws ConfigError when they mix
// keys, or are too few for the constants.
ExpertAllToAllFit fit_expert_all_to_all(const std::vector<ExpertAllToAllSample>& samples, int device_sms,
                                        double held_out_fraction, unsigned seed);

// Mean absolute relative error of `costs` on `samples` (0 when there are none).
double expert_all_to_all_error(const std::vector<ExpertAllToAllSample>& samples, int device_sms,
                               const ExpertAllToAllCosts& costs);

}  // namespace exasim::models
