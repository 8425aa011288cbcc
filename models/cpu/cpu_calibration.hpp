#pragma once
// Fits the CPU models' parameters (cpu_params.hpp) to an exasim-bench profile of a CPU and checks
// them on measurements the fit did not see. The split is fixed by rule, not chosen after the fact:
//   stream:  copy, scale and add are fitted; triad is checked (its bytes per element differ from
//            copy's, so it tests the read/write split, at every working set); the read-only
//            kernel (read) gives the read-only bandwidths, its working sets alternating fit, check
//   gemm:    distinct shapes in two families, skinny (m < 64: decode with a small batch) and
//            wide, each ordered by FLOPs, alternate fit, check, fit, ... (first and last fitted)
//   latency: working sets in increasing order alternate the same way
//   memcpy:  checked only (std::memcpy predicted by the STREAM-fitted memory model)
// Every fit is linear least squares with non-negative unknowns (Eigen), on relative residuals;
// cache capacities that a working set effectively gets are searched on a grid around the sizes
// the profile reports. Predictions come from the same model functions the simulator calls.
#include <string>
#include <vector>

#include "hw/cpu_spec.hpp"
#include "hw/profile/profile.hpp"
#include "models/cpu/cpu_params.hpp"

namespace exasim::models {

struct CpuFitRow {
  std::string suite, op, dtype;
  std::string shape;  // "1024x1024x1024", or the working set ("64 MiB")
  int threads = 1;
  double work = 0;    // FLOPs (gemm) or bytes (stream, memcpy); 0 for latency
  double measured_s = 0;
  double predicted_s = 0;
  bool check = false;  // in the check set: not used by the fit
  double error() const { return predicted_s / measured_s - 1.0; }
};

struct CpuCalibration {
  hw::CpuSpec spec;
  CpuParams params;
  std::vector<CpuFitRow> rows;
};

// The CPU as the profile describes it: cores, clock, the SIMD width exasim-bench was compiled for,
// L3 size. FMA units per core are not visible to software: 2, as on every x86 server core since
// Intel Haswell and AMD Zen 2 (Arm Neoverse V1/V2 have four 128-bit pipes: also 2 x 256 bits).
hw::CpuSpec cpu_spec_from_profile(const hw::ProfileDevice& device);

// Fits parameters for `device` (a CPU of the profile) on top of defaults from `spec`.
// `source` names the profile in errors. Throws ConfigError when the profile lacks the STREAM or
// GEMM measurements of that device.
CpuCalibration calibrate_cpu(const hw::Profile& profile, const hw::ProfileDevice& device, const hw::CpuSpec& spec,
                             const std::string& source);

// Absolute relative errors of the rows that match: count, median and maximum.
struct CpuErrorSummary {
  int count = 0;
  double median = 0, max = 0;
};
CpuErrorSummary summarize(const std::vector<CpuFitRow>& rows, const std::string& suite, bool check,
                          const std::string& op = "", int threads = 0);

}  // namespace exasim::models
