#pragma once
// Mixture-of-experts load balance: how many tokens the busiest expert-parallel rank processes
// over the balanced share, from a scalar (training.moe_load_imbalance) or from a router log
// (training.moe_routing_trace: tokens each expert received in each MoE layer), with the expert
// capacity of token-dropping routers (Switch/GShard; Megatron --moe-expert-capacity-factor).
#include <memory>
#include <string>
#include <vector>

namespace exasim::workloads {

// Tokens each expert received, per layer, as a router logged them (any unit: only ratios count).
struct MoeRouting {
  std::string file;
  std::vector<std::vector<double>> tokens;  // [model layer][expert]; empty rows: layer not logged
};

// Reads a CSV with the header `layer,expert,tokens` (layer: the model's 0-based layer index).
// Throws IoError / ConfigError naming the file, line and column.
std::shared_ptr<const MoeRouting> read_moe_routing(const std::string& path);

struct MoeBalance {
  double imbalance = 1;        // scalar: the busiest rank over the mean (>= 1)
  const MoeRouting* routing = nullptr;  // or the log (wins over the scalar)
  double capacity_factor = 0;  // 0: dropless; else each expert takes at most factor x its balanced share
  bool pad_to_capacity = false;  // experts run exactly their capacity (padded), as with --moe-pad-expert-input-to-capacity
};

// The busiest of `ep` ranks' tokens over the balanced share in MoE layer `layer` of a model with
// `experts` experts, rank r holding experts [r E/ep, (r+1) E/ep).
double busiest_rank_load(const MoeBalance& b, int layer, int experts, int ep);

}  // namespace exasim::workloads
