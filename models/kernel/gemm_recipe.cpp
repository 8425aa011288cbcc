#include "models/kernel/gemm_recipe.hpp"

#include <array>

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

int cast_kernel(InputCast c, DType to) {
  switch (c) {
    case InputCast::kNone: return -1;
    case InputCast::kStatic: return 0;
    case InputCast::kPerTensor: return 1;
    case InputCast::kPerGroup: return to == DType::kFp4 ? 3 : 2;
  }
  return -1;
}

std::string_view cast_kernel_name(int kernel) {
  switch (kernel) {
    case 0: return "static";
    case 1: return "per_tensor";
    case 2: return "per_group";
    case 3: return "per_group_fp4";
    default: return "?";
  }
}

namespace {

constexpr std::array<GemmFormat, 9> kFormats = {{
    {"bfloat16", DType::kBf16, GemmRecipe::kDense, InputCast::kNone},
    {"float16", DType::kFp16, GemmRecipe::kDense, InputCast::kNone},
    {"fp8", DType::kFp8, GemmRecipe::kDense, InputCast::kPerTensor},
    {"fp8_static", DType::kFp8, GemmRecipe::kDense, InputCast::kStatic},
    {"fp8_block", DType::kFp8, GemmRecipe::kBlockScaled, InputCast::kPerGroup},
    {"nvfp4", DType::kFp4, GemmRecipe::kDense, InputCast::kPerGroup},
    {"sq", DType::kInt8, GemmRecipe::kDense, InputCast::kPerGroup},
    {"int8_wo", DType::kInt8, GemmRecipe::kWeightOnly, InputCast::kNone},
    {"int4_wo", DType::kInt4, GemmRecipe::kWeightOnly, InputCast::kNone},
}};

}  // namespace

std::span<const GemmFormat> gemm_formats() { return kFormats; }

const GemmFormat* find_gemm_format(std::string_view name, DType dtype) {
  for (const GemmFormat& f : kFormats)
    if (f.name == name) return &f;
  // A recipe or cast name: the format of that recipe (dense: with no cast) or cast for `dtype`.
  for (const GemmFormat& f : kFormats) {
    if (f.dtype != dtype) continue;
    const bool recipe = gemm_recipe_name(f.recipe) == name && (f.recipe != GemmRecipe::kDense || f.cast == InputCast::kNone);
    if (recipe || (f.cast != InputCast::kNone && input_cast_name(f.cast) == name)) return &f;
  }
  return nullptr;
}

}  // namespace exasim::models
