#include "workloads/serving/serving_config.hpp"

#include <cmath>

namespace exasim::workloads::serving {

const char* pool_role_name(PoolRole r) {
  switch (r) {
    case PoolRole::kMixed: return "mixed";
    case PoolRole::kPrefill: return "prefill";
    case PoolRole::kDecode: return "decode";
  }
  return "?";
}

const char* moe_all_to_all_name(MoeAllToAll k) {
  switch (k) {
    case MoeAllToAll::kNccl: return "nccl";
    case MoeAllToAll::kDeepEp: return "deepep";
    case MoeAllToAll::kNvlinkTwoSided: return "nvlink-two-sided";
  }
  return "?";
}

double SpeculativeConfig::expected_tokens_per_step() const {
  if (acceptance >= 1) return tokens + 1.0;
  return (1 - std::pow(acceptance, tokens + 1)) / (1 - acceptance);
}

int ServingConfig::gpus() const {
  int n = 0;
  for (const PoolConfig& p : pools) n += p.replicas * p.parallelism.gpus();
  return n;
}

}  // namespace exasim::workloads::serving
