#pragma once
// Reader of NVIDIA AIConfigurator's TensorRT-LLM NVLink all-to-all table of GB200 NVL72 racks
// (shared/data/kernels-aic/gb200/trtllm_alltoall_perf.csv; ai-dynamo/aiconfigurator, Apache-2.0):
// one kernel call per row, `op_name` (alltoall_prepare, alltoall_dispatch, alltoall_combine,
// alltoall_combine_low_precision), `kernel_source` (NVLinkTwoSided, NVLinkOneSided), `moe_dtype`
// (bfloat16, fp8, nvfp4: the format dispatch moves), `num_tokens` (a rank's), `moe_ep_size` (GPUs
// of the group, 2-64) and `latency` in milliseconds.
// The file names no layer shape (shared/data/README lists hidden_size, topk and num_experts
// columns it does not have): taken as DeepSeek-V3's, AIConfigurator's default for this collector
// (kNvlinkTableHidden, kNvlinkTableTopk, kNvlinkTableExperts). Combine moves bf16 rows whatever
// moe_dtype says (its times agree to 0.5% across the three), the low-precision combine nvfp4.
#include <string>
#include <vector>

#include "models/calibration/expert_all_to_all_fit.hpp"

namespace exasim::models {

inline constexpr int kNvlinkTableHidden = 7168;
inline constexpr int kNvlinkTableTopk = 8;
inline constexpr int kNvlinkTableExperts = 256;

// Throws IoError when the file cannot be read, ConfigError (file, line, column) on a bad row: an
// unknown op_name, kernel_source or moe_dtype (the known ones listed), a prepare of the one-sided
// kernel (it has none), a group of fewer than two GPUs or one the 256 experts do not spread
// over evenly, tokens not a positive whole number, a non-positive latency, more fields than the
// header; and on a table with no row.
std::vector<ExpertAllToAllSample> read_aic_nvlink_all_to_all_table(const std::string& path);

bool is_aic_nvlink_all_to_all_table(const std::string& path);

}  // namespace exasim::models
