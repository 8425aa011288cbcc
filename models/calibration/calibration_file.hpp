#pragma once
// Calibration files (configs/calibration/*.yaml): fitted model parameters that replace the
// per-family defaults.
//   kernel:     {matrix_efficiency, vector_efficiency, hbm_efficiency, launch_overhead}
//   collective: {intra_efficiency, inter_efficiency, step_overhead}
#include <string>

#include "hw/config/node.hpp"
#include "models/collective/collective_model.hpp"
#include "models/kernel/kernel_params.hpp"

namespace exasim::models {

struct Calibration {
  KernelParams kernel;
  CollectiveParams collective;
};

// Applies the keys present in `node` (a mapping) on top of `base`.
Calibration apply_calibration(Calibration base, const config::Node& node);
Calibration load_calibration(Calibration base, const std::string& path);

}  // namespace exasim::models
