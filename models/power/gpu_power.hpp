#pragma once
// First-order GPU power: idle power plus dynamic power that grows with utilization up to TDP.
// (A fuller model with per-unit activity and DVFS under a power cap is planned.)
#include "hw/gpu_spec.hpp"

namespace exasim::models {

// utilization: fraction of time the GPU's compute units are busy, in [0, 1].
double gpu_power_w(const hw::GpuSpec& gpu, double utilization);

}  // namespace exasim::models
