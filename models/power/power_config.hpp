#pragma once
// The scenario's `power:` section: a per-GPU power cap, and the facility budget and caps of the
// power-capped what-if.
//   power:
//     gpu_cap: 300 W                 # nvidia-smi -pl; default: none (TDP)
//     facility_budget: 25 MW         # what-if: facility power available (IT x PUE)
//     whatif_caps: [700 W, 600 W, 500 W]   # what-if: caps to compare (default: TDP down to 50% in 10% steps)
//     dvfs: {min_frequency: 0.15, knee: 0.5, voltage_floor: 0.7}
#include <vector>

#include "hw/config/node.hpp"
#include "models/power/dvfs.hpp"

namespace exasim::models {

struct PowerConfig {
  double gpu_cap_w = 0;          // 0: uncapped
  double facility_budget_w = 0;  // 0: not given
  std::vector<double> whatif_caps_w;
  DvfsCurve dvfs;
};

// Reads `n` (may be undefined: defaults). Throws ConfigError naming the key.
PowerConfig read_power_config(const config::Node& n);

// The caps the what-if compares: the configured list, or TDP, 90%, ..., 50% of TDP.
std::vector<double> whatif_caps(const PowerConfig& c, double tdp_w);

}  // namespace exasim::models
