#include "models/power/gpu_power.hpp"

#include <algorithm>

namespace exasim::models {

double gpu_power_w(const hw::GpuSpec& gpu, double utilization) {
  const double u = std::clamp(utilization, 0.0, 1.0);
  return gpu.idle_power_w + (gpu.tdp_w - gpu.idle_power_w) * u;
}

}  // namespace exasim::models
