#pragma once
// How a GEMM's operands are stored and scaled, beside their dtype: what the kernel reads from
// memory and what its main loop does besides the matrix instructions.
//   dense         both operands in the GEMM's dtype, one scale per tensor (bf16; fp8 with
//                 per-tensor scales, dynamic or static; int8 SmoothQuant with per-token and
//                 per-channel scales, applied in the epilogue; NVFP4, whose 1-per-16 block
//                 scales the tensor cores read themselves, gemm_model.cpp)
//   block_scaled  fp8 with one fp32 scale per 1 x 128 block of activations and per 128 x 128
//                 block of weights (DeepSeek-V3, arXiv:2412.19437 sec. 3.3; DeepGEMM). On Hopper
//                 the tensor cores cannot apply the scales: every 128 K the partial sums are
//                 promoted to fp32 registers and scaled on the CUDA cores, which costs main-loop
//                 rate; Blackwell's tcgen05 applies block scales (MXFP8) in the MMA itself.
//   weight_only   weights in the dtype (int8, int4 with one 16-bit scale per 128 weights),
//                 activations in 16 bits; the main loop dequantizes the weights in registers
//                 and runs 16-bit MMAs (TensorRT-LLM's weight-only kernels, Marlin): the
//                 weight bytes shrink, the math does not.
#include <span>
#include <string_view>

#include "hw/dtype.hpp"

namespace exasim::models {

enum class GemmRecipe { kDense, kBlockScaled, kWeightOnly };

std::string_view gemm_recipe_name(GemmRecipe r);  // "dense", "block_scaled", "weight_only"

// The cast a low-precision GEMM op runs on its 16-bit input before the GEMM (what an inference
// framework's fp8 / fp4 / int8 linear layer does; in training, Transformer Engine's casts):
//   static      one known scale: read the 16-bit tensor, write it narrow
//   per_tensor  dynamic per-tensor scale: an amax pass over the tensor first (a reduction, then
//               the scale), then the cast: the input is read twice
//   per_group   dynamic scales per 1 x 128 (fp8 block), 1 x 16 (NVFP4) or per token (int8
//               SmoothQuant): amax and cast of each group in one pass, the scales written beside
// Each kind has its own fixed cost (KernelParams::cast_overhead): the kernels it launches.
enum class InputCast { kNone, kStatic, kPerTensor, kPerGroup };
std::string_view input_cast_name(InputCast c);  // "none", "static", "per_tensor", "per_group"
// The kernels that run a cast, each with its own fixed cost and bandwidth (KernelParams): one per
// kind, and the per-group cast to fp4 apart from the 8-bit ones, being another kernel: NVFP4's
// quantize writes two values per byte and one e4m3 scale per 16 in the swizzled layout the
// tensor cores read, DeepGEMM's fp8 cast one fp32 (Blackwell: packed ue8m0) scale per 128
// (B200, kernels-aic, 32768 x 128 x 8192: fp8_block 1296 us, nvfp4 208 us).
//   0 static, 1 per_tensor, 2 per_group (8-bit: fp8 1 x 128, int8 per token), 3 per_group_fp4
inline constexpr int kCastKernels = 4;
int cast_kernel(InputCast c, DType to);     // index of the kernel above; -1 for kNone
std::string_view cast_kernel_name(int kernel);  // "static", ..., "per_group_fp4"

// A GEMM op as an inference framework runs it and NVIDIA's kernel tables name it (AIConfigurator's
// gemm_dtype, TensorRT-LLM's quantized linear layers): operand dtype, recipe, and the cast of
// its 16-bit input that runs before it.
struct GemmFormat {
  std::string_view name;
  DType dtype;
  GemmRecipe recipe;
  InputCast cast;
};
//   bfloat16, float16  16-bit, no cast
//   fp8                dense, dynamic per-tensor cast      fp8_static  dense, static cast
//   fp8_block          block-scaled, per-group (1 x 128)    nvfp4       dense fp4, per-group (1 x 16)
//   sq                 int8 SmoothQuant, per-token cast     int8_wo, int4_wo  weight-only, no cast
std::span<const GemmFormat> gemm_formats();
// The format named `name` (a gemm_formats() name), or the one whose recipe or cast is named
// `name` for operands in `dtype` ("per_tensor" + fp8 = fp8, "block_scaled" + fp8 = fp8_block,
// "per_group" + fp4 = nvfp4, "weight_only" + int4 = int4_wo); nullptr when none.
const GemmFormat* find_gemm_format(std::string_view name, DType dtype);

}  // namespace exasim::models
