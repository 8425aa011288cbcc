#pragma once
// Calibration of the kernel models to a set of measured kernels (Vidur op tables, exasim-bench
// profiles), with the comparisons that make the result trustworthy: the samples are split into
// a fit set (the `fit_sources`, or all) and a held-out set predicted without refitting, and the
// tile models are reported beside two baselines on the same shapes: the datasheet roofline
// (peak rate, peak bandwidth, no overhead) and the roofline with three fitted numbers (achieved
// matrix rate, achieved bandwidth, one overhead), and beside the predictions without this
// GPU's measurements: datasheet + microbenchmarks, and the family defaults.
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/calibration/kernel_accuracy.hpp"
#include "models/calibration/kernel_fit.hpp"

namespace exasim::models {

// GEMM parameters fitted to GEMM samples; memory-op parameters are fitted per op present.
const std::vector<std::string>& gemm_parameter_names();
const std::vector<std::string>& roofline_parameter_names();  // matrix_efficiency, hbm_efficiency, launch_overhead

// The roofline baseline as a predictor (models/kernel/roofline.hpp): GEMMs on the matrix units,
// memory ops as bytes over bandwidth.
SamplePredictor roofline_predictor(const hw::GpuSpec& gpu);
// Parameters that make the roofline the datasheet roofline (efficiencies 1, no overhead).
KernelParams datasheet_params();

struct KernelCalibrationOptions {
  std::vector<std::string> fit_sources;  // samples whose source is listed are fitted; empty: all
  KernelFitOptions fit;
};

struct KernelCalibration {
  KernelParams uncalibrated;   // datasheet + microbenchmarks: no measured kernel table at all
  KernelParams family;         // the family defaults (fitted on another GPU of the family) the fit started from
  KernelParams fitted;
  KernelParams roofline;       // the three-number roofline, fitted on the same GEMM samples
  std::vector<std::string> fitted_names;
  std::vector<KernelSample> fit_set, held_out;
  double gemm_fit_error = 0, memory_fit_error = 0;  // mean |pred/meas - 1| on the fit set
};

// Throws ConfigError when `fit_sources` names a source that no sample has.
KernelCalibration calibrate_kernels(const hw::GpuSpec& gpu, const std::vector<KernelSample>& samples,
                                    const KernelCalibrationOptions& options);

}  // namespace exasim::models
