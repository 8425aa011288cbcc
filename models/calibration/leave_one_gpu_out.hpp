#pragma once
// Leave one GPU out: how exasim predicts a GPU nobody has measured. For each GPU of a set of
// measured tables, one parameter set (fractions of datasheet peaks, fixed costs) is fitted on
// every other GPU's GEMMs together, and the left-out GPU's GEMMs are predicted from its
// datasheet (catalog spec) and those parameters alone. Formats only the left-out GPU has (e.g.
// A100's weight-only kernels) fall back as KernelParams::matrix_efficiency_for says.
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/calibration/kernel_accuracy.hpp"
#include "models/calibration/kernel_fit.hpp"

namespace exasim::models {

struct MeasuredGpu {
  hw::GpuSpec gpu;
  std::vector<KernelSample> gemms;  // every sample's `source` names this GPU (kept apart by it)
};

struct LeftOutGpu {
  std::string gpu;             // catalog name
  KernelParams fitted;         // fitted on the other GPUs
  AccuracyTable by_time;       // the left-out GPU's GEMMs, by measured time
  AccuracyTable by_roofline;   // the datasheet roofline on the same GEMMs (the baseline)
  double mean_abs_error = 0;   // over all its GEMMs
};

struct LeaveOneOutOptions {
  std::size_t fit_gemms_per_gpu = 1500;  // spread subset of each training GPU in the joint fit
  KernelFitOptions fit;
  unsigned seed = 1;
};

// Throws ConfigError when fewer than two GPUs are given or two share a `source`.
std::vector<LeftOutGpu> leave_one_gpu_out(const std::vector<MeasuredGpu>& gpus, KernelParams start,
                                          const LeaveOneOutOptions& options = {});

// A predictor over samples of several GPUs: each sample's GPU by its `source`.
SamplePredictor multi_gpu_predictor(const std::vector<MeasuredGpu>& gpus);

}  // namespace exasim::models
