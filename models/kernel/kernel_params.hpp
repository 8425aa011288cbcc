#pragma once
// Named, calibratable parameters of the kernel models: how far each unit falls short of its
// datasheet peak, and the fixed cost of a kernel launch. Defaults per GPU family are measured
// figures with their sources (kernel_params.cpp); `calibration:` files replace them.
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"

namespace exasim::models {

struct KernelParams {
  double matrix_efficiency = 0.85;  // achieved / dense peak for large matrix-unit GEMMs
  double vector_efficiency = 0.6;   // achieved / peak for non-matrix FLOPs
  double hbm_efficiency = 0.8;      // achieved / datasheet HBM bandwidth for streaming kernels
  double launch_overhead_s = 8e-6;  // per kernel: launch, prologue/epilogue, partial last wave
  std::string source;               // where the values came from ("family default: ...", a calibration file)

  // Family defaults, chosen by vendor and architecture of the GPU.
  static KernelParams defaults_for(const hw::GpuSpec& gpu);
};

// Name/value view for calibration and reports: "matrix_efficiency", "hbm_efficiency", ...
struct NamedParam {
  std::string name;
  double* value;
  std::string unit;
};
std::vector<NamedParam> named_params(KernelParams& p);

}  // namespace exasim::models
