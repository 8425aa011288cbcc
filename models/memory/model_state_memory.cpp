#include "models/memory/model_state_memory.hpp"

namespace exasim::models {

ModelStateBytes model_state_bytes(double params, int zero_stage, int dp, const PrecisionBytes& b) {
  const double shard = dp > 0 ? 1.0 / dp : 1.0;
  ModelStateBytes m;
  m.weights = params * b.weight * (zero_stage >= 3 ? shard : 1.0);
  m.gradients = params * b.gradient * (zero_stage >= 2 ? shard : 1.0);
  m.optimizer = params * b.optimizer * (zero_stage >= 1 ? shard : 1.0);
  return m;
}

}  // namespace exasim::models
