#pragma once
// Catalog GPUs and kernel parameters for the kernel-model tests: configs/hw/gpus.yaml and the
// committed A100 calibration (configs/calibration/a100-sxm4-80gb.yaml) of this source tree.
#include <string>

#include "hw/catalog.hpp"
#include "models/calibration/calibration_file.hpp"

namespace exasim::testing {

inline const hw::Catalog& test_catalog() {
  static const hw::Catalog cat = hw::Catalog::load(std::string(EXASIM_SOURCE_DIR) + "/configs");
  return cat;
}

inline hw::GpuSpec catalog_gpu(const std::string& name) { return test_catalog().gpu(name); }

// The GPU's family defaults with the fitted A100 parameters on top: the regime the tile model
// was calibrated in (large GEMMs matrix-bound, decode GEMMs HBM-bound).
inline models::KernelParams calibrated_params(const hw::GpuSpec& gpu) {
  models::Calibration base;
  base.kernel = models::KernelParams::defaults_for(gpu);
  return models::load_calibration(base, std::string(EXASIM_SOURCE_DIR) + "/configs/calibration/a100-sxm4-80gb.yaml")
      .kernel;
}

}  // namespace exasim::testing
