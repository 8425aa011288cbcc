#pragma once
// Shared set-up for planner tests: scenarios from YAML text on the real catalog, small enough
// that the engine simulates dozens of plans in a test.
#include <string>

#include "hw/catalog.hpp"
#include "workloads/planner/planner_inputs.hpp"
#include "workloads/scenario/scenario.hpp"

namespace exasim::testing {

inline const hw::Catalog& planner_catalog() {
  static const hw::Catalog c = hw::Catalog::load(std::string(EXASIM_SOURCE_DIR) + "/configs");
  return c;
}

inline workloads::Scenario scenario_from_yaml(const std::string& yaml) {
  return workloads::scenario_from_node(config::load_string(yaml, "<test>"), planner_catalog(), ".");
}

// A 1.3B-class GPT on two DGX A100 nodes (16 GPUs) on HDR InfiniBand.
inline std::string small_gpt_yaml(const std::string& extra = "") {
  return R"(
name: small-gpt
cluster: {gpu: A100-SXM4-80GB, gpus_per_node: 8, nodes: 2, intra_node: nvswitch-a100,
          inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 8}}
model: {layers: 24, hidden: 2048, heads: 16, kv_heads: 16, ffn: 8192, vocab: 51200}
training: {seq_len: 2048, global_batch: 64, micro_batch: 1, precision: bf16,
           parallelism: {tp: 2, pp: 2, dp: 4, sequence_parallel: true}, zero: 1, recompute: selective}
cost: {gpu_hour_usd: 2.0, electricity_usd_per_kwh: 0.10, pue: 1.2}
)" + extra;
}

}  // namespace exasim::testing
