#pragma once
// Reader of NVIDIA AIConfigurator's measured MoE tables (shared/data/kernels-aic/<gpu>/
// moe_perf.csv; ai-dynamo/aiconfigurator, Apache-2.0): one MoE layer's routed experts on one
// rank (TensorRT-LLM's fused MoE op in a CUDA graph: kernel times, burst clocks), latency in ms:
//   num_tokens          tokens entering the layer (every rank routes them all)
//   hidden_size, inter_size, topk, num_experts
//   moe_tp_size         ranks each expert's FFN is split over (inter_size / moe_tp each)
//   moe_ep_size         ranks the experts are spread over (num_experts / moe_ep each)
//   distribution        balanced | power_law_A (expert_routing.hpp: the rank measured is the busiest)
//   kernel_source       moe_torch_flow_cutlass (gated), moe_torch_flow_nongated, deepgemm
//                       (fp8_block), moe_torch_flow_min_latency, moe_torch_flow; absent in the
//                       TensorRT-LLM 1.0 table (a100_sxm: moe_torch_flow, MANIFEST.tsv)
//   moe_dtype           the grouped GEMMs' format (gemm_recipe.hpp names); absent: bfloat16
// Rows whose format the GEMM model has no recipe for (w4a16_mxfp4, w4a8_mxfp4_mxfp8: MXFP4
// weights) and those of TensorRT-LLM's min-latency MoE kernels (moe_torch_flow_min_latency: not
// the grouped-GEMM op the model prices; 0.25-1.9x the CUTLASS op's time on the same rows, so
// the two cannot share one op name) are left out and counted. op names: "moe <format>
// <distribution>" ("moe nongated ..." for the plain-activation kernels), for the error tables.
#include <map>
#include <string>
#include <vector>

#include "models/calibration/kernel_sample.hpp"

namespace exasim::models {

struct AicMoeTable {
  std::vector<KernelSample> samples;
  std::map<std::string, int> left_out;  // rows the model cannot price, by what and why ("w4a16_mxfp4 (...)")
};

// Throws IoError when the file cannot be read, ConfigError (file, line, column) on a bad row: a
// count that is not a whole number in [1, 2^31), topk above num_experts, moe_ep_size not
// dividing num_experts or moe_tp_size not dividing inter_size, an unknown distribution or kernel
// source, a non-positive latency, more fields than the header; and on a table with no row the
// model can price.
AicMoeTable read_aic_moe_table(const std::string& path);

bool is_aic_moe_table(const std::string& path);

// Balanced rows that took longer than a measurement of more work, left out: under balanced
// routing a rank's work grows with the tokens and shrinks with the ranks (half the experts and
// copies, the same routing and finalize over all tokens), so a row more than `tolerance` slower
//   than_more_tokens   than the same configuration (layer, format, moe_tp, moe_ep) at more tokens
//   than_half_ranks    than the configuration over half as many ranks, by the median ratio over
//                      the token counts both have (the whole configuration is left out)
// did not measure the kernels the table names (H100: E = 16, top 1, EP 16 is flat at 460-500 us
// from 1 to 512 tokens and 221 us at 2048; 72 configurations 1.8-2.7x slower than over half
// the ranks at every token count).
struct MoeRowsDropped {
  std::size_t than_more_tokens = 0, than_half_ranks = 0;
};
MoeRowsDropped drop_moe_rows_slower_than_more_work(std::vector<KernelSample>& samples, double tolerance = 1.3);

}  // namespace exasim::models
