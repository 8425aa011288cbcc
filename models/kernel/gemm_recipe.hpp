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
#include <string_view>

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
inline constexpr int kInputCastKinds = 3;  // static, per_tensor, per_group
std::string_view input_cast_name(InputCast c);  // "none", "static", "per_tensor", "per_group"

}  // namespace exasim::models
