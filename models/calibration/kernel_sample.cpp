#include "models/calibration/kernel_sample.hpp"

namespace exasim::models {

double predict_sample(const hw::GpuSpec& gpu, const KernelParams& p, const KernelSample& s) {
  if (s.kind == SampleKind::kGemm) return gemm_time(gpu, p, s.dtype, s.m, s.n, s.k, s.batch).time_s;
  return memory_op(gpu, p, s.memory_op, s.dtype, s.rows, s.cols).time_s;
}

}  // namespace exasim::models
