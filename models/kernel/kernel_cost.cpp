#include "models/kernel/kernel_cost.hpp"

namespace exasim::models {

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::kMatrix: return "matrix";
    case Bound::kVector: return "vector";
    case Bound::kSmemL2: return "smem_l2";
    case Bound::kHbm: return "hbm";
    case Bound::kLaunch: return "launch";
  }
  return "?";
}

}  // namespace exasim::models
