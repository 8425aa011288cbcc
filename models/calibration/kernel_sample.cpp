#include "models/calibration/kernel_sample.hpp"

namespace exasim::models {

double predict_sample(const hw::GpuSpec& gpu, const KernelParams& p, const KernelSample& s) {
  const double launch = s.timing == SampleTiming::kLaunchIncluded ? p.host_launch_overhead_s : 0.0;
  if (s.kind == SampleKind::kGemm)
    return launch + input_cast(gpu, p, s.cast, s.dtype, s.m * s.batch, s.k).time_s +
           gemm_time(gpu, p, s.dtype, s.m, s.n, s.k, s.batch, s.recipe).time_s;
  return launch + memory_op(gpu, p, s.memory_op, s.dtype, s.rows, s.cols).time_s;
}

}  // namespace exasim::models
