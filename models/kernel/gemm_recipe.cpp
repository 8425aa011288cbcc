#include "models/kernel/gemm_recipe.hpp"

namespace exasim::models {

std::string_view gemm_recipe_name(GemmRecipe r) {
  switch (r) {
    case GemmRecipe::kDense: return "dense";
    case GemmRecipe::kBlockScaled: return "block_scaled";
    case GemmRecipe::kWeightOnly: return "weight_only";
  }
  return "?";
}

std::string_view input_cast_name(InputCast c) {
  switch (c) {
    case InputCast::kNone: return "none";
    case InputCast::kStatic: return "static";
    case InputCast::kPerTensor: return "per_tensor";
    case InputCast::kPerGroup: return "per_group";
  }
  return "?";
}

}  // namespace exasim::models
