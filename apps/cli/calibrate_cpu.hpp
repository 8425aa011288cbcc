#pragma once
// The CPU branch of `exasim calibrate` for exasim-bench profiles (models/cpu/cpu_calibration.hpp):
// fits the CPU models, prints parameters, predicted vs measured on the check set and a summary,
// and writes the `cpu:` calibration file.
#include <ostream>
#include <string>

#include "apps/cli/commands.hpp"
#include "hw/profile/profile.hpp"

namespace exasim::cli {

// True when the profile holds STREAM or GEMM measurements of a CPU device.
bool profile_has_cpu(const hw::Profile& profile);

// `device`: a catalog CPU whose spec is the basis of the fit (empty: the spec the profile reports).
// `output`: the calibration file (empty: configs/calibration/<host>-<date>.yaml).
int calibrate_cpu_profile(const Context& ctx, const hw::Profile& profile, const std::string& profile_path,
                          const std::string& device, const std::string& output, std::ostream& out);

}  // namespace exasim::cli
