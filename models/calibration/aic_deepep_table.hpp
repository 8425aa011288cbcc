#pragma once
// Reader of NVIDIA AIConfigurator's DeepEP tables (shared/data/kernels-aic/<gpu>/
// wideep_deepep_normal_perf.csv and wideep_deepep_ll_perf.csv; ai-dynamo/aiconfigurator,
// Apache-2.0): one MoE layer's dispatch and combine per row, by `hidden_size`, `num_token`
// (tokens a rank routes), `num_topk`, `num_experts`;
// - normal: `dispatch_sms` / `combine_sms` (SMs given to the kernel) and `dispatch_transmit_us` /
//   `combine_transmit_us` in microseconds;
// - low-latency: `dispatch_avg_t_us` / `combine_avg_t_us` in microseconds (its bandwidth columns
//   are num_token x topk x row bytes over the time: derived, not read).
// The tables name no node count. They were taken on one node of 8 GPUs (kDeepEpTableRanks): with
// 8 ranks each GPU's rate comes out alike for top-8 and top-22 routing of 512 experts (H100, 24
// SMs, 131072 tokens: 349 and 331 GB/s of fp8 payload), where 16 ranks would put top-22 at 534.
#include <string>
#include <vector>

#include "models/calibration/expert_all_to_all_fit.hpp"

namespace exasim::models {

inline constexpr int kDeepEpTableRanks = 8;

// Two samples a row (dispatch, combine), each a rank's side of an exchange over `ranks` GPUs.
// Throws IoError when the file cannot be read, ConfigError (file, line, column) on a bad row: a
// count that is not a positive whole number, top-k above the experts, fewer experts than ranks,
// experts not a multiple of the ranks, a non-positive time, more fields than the header; and on a
// table with no row.
std::vector<ExpertAllToAllSample> read_aic_deepep_table(const std::string& path, int ranks = kDeepEpTableRanks);

// True when the file's header is that of a DeepEP normal or low-latency table.
bool is_aic_deepep_table(const std::string& path);

}  // namespace exasim::models
