#pragma once
// The MoE tables' side of `exasim calibrate` (AIConfigurator kernels-aic/<gpu>/moe_perf.csv): the
// rows the model can price, and per-row residuals split into the fused op's kernels.
#include <ostream>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/calibration/kernel_sample.hpp"

namespace exasim::cli {

// The table's rows the model can price, without the balanced rows slower than a measurement of
// more work (aic_moe_table.hpp); says on `out` how many it read and what it left out.
std::vector<models::KernelSample> read_moe_table(const std::string& in, std::ostream& out);

// Says on `out` how many MoE calls drop_faster_than_hbm left out (none: nothing).
void report_moe_faster_than_hbm(const models::FasterThanHbm& dropped, const std::string& gpu, std::ostream& out);

// One line per MoE call with the prediction split into its kernels (moe_experts_model.hpp) and the
// rank's load the routing gave: which part of the op a shape's error sits in.
void write_moe_residuals(const std::string& path, const hw::GpuSpec& gpu, const models::KernelParams& p,
                         const std::vector<models::KernelSample>& samples);

}  // namespace exasim::cli
