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
#include "models/calibration/least_squares.hpp"

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
  // Hold out whole GEMM shapes: each (n, k) pair goes to the held-out set with this probability
  // (a seeded hash of the pair, the same for every dtype and m), as a new model's widths would
  // be unseen. 0: no shape is held out.
  double held_out_shapes = 0;
  unsigned split_seed = 1;
  // At most this many GEMMs of the fit set enter the least-squares fit (every i-th of a seeded
  // shuffle, so each dtype and size keeps its share); errors are reported on the whole set. 0: all.
  std::size_t max_fit_gemms = 0;
  // Turn on the kernel-library switches (KernelParams::smem_operand_mma, stream_k,
  // narrow_output_16bit) before fitting, and write them: the fits on NVIDIA's kernel tables.
  bool library_behaviours = false;
  // Each group of parameters (GEMM, memory ops, prefill, decode) is fitted only on at least this
  // many of its measurements per parameter (require_samples_for_fit); 0 lets tests of the split
  // fit on a handful.
  std::size_t samples_per_parameter = kSamplesPerParameter;
  KernelFitOptions fit;
};

// At most `limit` of `samples` (0: all), drawn by a seeded shuffle and kept in their order, so
// each dtype and size keeps its share.
std::vector<KernelSample> spread_subset(const std::vector<KernelSample>& samples, std::size_t limit, unsigned seed);

// Whether the GEMM shape (n, k) is held out under `fraction` and `seed` (the split above).
bool shape_held_out(double n, double k, double fraction, unsigned seed);
// The split of calibrate_kernels: GEMMs by (n, k); attention by its geometry (query and key/value
// heads, head dimension, window), as a new model's would be; memory ops never.
bool sample_held_out(const KernelSample& s, double fraction, unsigned seed);

// The GEMM parameters to fit on `gemms`: gemm_parameter_names(), plus the matrix efficiency of
// each operand format and recipe present (matrix_efficiency_fp8, _fp4, _int8, _block_fp8,
// _weight_only), without matrix_efficiency when no 16-bit GEMM is among them, and without the
// power limit's when every one ran at burst clocks.
std::vector<std::string> gemm_parameters_for(const std::vector<KernelSample>& gemms);
// Whether the block-scaled fp8 GEMMs of a table pay for a copy of their scales when the rows are
// not a multiple of 4 (KernelParams::scale_align_overhead): the median, over shapes measured at
// both, of t(m + 1) - t(m) for m = 4, 8, 12 with k > 128 (rows far below any tile edge, so
// nothing else changes) is above 1 us, where timing noise is ~0.2 us (GB200: 6-8 us; H100, H200,
// B200: under 0.2 us). False when the table has fewer than 10 such pairs.
bool shows_scale_alignment_copy(const std::vector<KernelSample>& gemms);
// Sets each per-format efficiency that is 0 (falls back) to the value it falls back to, so a
// fit of it starts where the model stands, and the weight-only fixed cost (0: none) in its range.
void resolve_format_efficiencies(KernelParams& p);

struct KernelCalibration {
  KernelParams uncalibrated;   // datasheet + microbenchmarks: no measured kernel table at all
  KernelParams family;         // the family defaults (fitted on another GPU of the family) the fit started from
  KernelParams fitted;
  KernelParams roofline;       // the three-number roofline, fitted on the same GEMM samples
  std::vector<std::string> fitted_names;
  std::vector<KernelSample> fit_set, held_out;
  double gemm_fit_error = 0, memory_fit_error = 0;  // mean |pred/meas - 1| on the fit set
  double prefill_fit_error = 0, decode_fit_error = 0;
};

// Throws ConfigError when `fit_sources` names a source that no sample has, when the fit set is
// empty, or when a group has too few measurements for its parameters (the counts).
KernelCalibration calibrate_kernels(const hw::GpuSpec& gpu, const std::vector<KernelSample>& samples,
                                    const KernelCalibrationOptions& options);

}  // namespace exasim::models
