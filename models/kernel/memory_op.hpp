#pragma once
// The memory-bound kernels the models know, by name. Each runs over a [rows, cols] activation
// in a dtype (kernel_models.hpp: memory_op, memory_op_traffic):
//   elementwise   y = f(x)                          rows x cols
//   residual_add  y = x + r                         rows x cols
//   silu_mul      y = silu(g) * u, [rows, 2 cols] -> [rows, cols]
//   gelu          y = gelu(x)
//   rmsnorm, layernorm   over the last dimension (cols), with weight (and bias)
//   softmax       over the last dimension
//   rope          rotary embedding of q and k: rows = tokens, cols = (heads + kv_heads) x head_dim
//   embedding     gather of rows = tokens, cols = hidden from the table
//   adam          optimizer step on rows = parameters (cols = 1): fp32 master, m, v; `dtype` grads/weights
// The *_backward variants are the training backward kernels of the same op; cross_entropy
// is the vocabulary-parallel loss over rows = tokens, cols = vocabulary shard.
#include <cstddef>
#include <optional>
#include <string_view>

namespace exasim::models {

enum class MemoryOp {
  kElementwise, kResidualAdd, kSiluMul, kGelu, kRmsNorm, kLayerNorm, kSoftmax, kRope, kEmbedding, kAdam,
  kSiluMulBackward, kGeluBackward, kRmsNormBackward, kLayerNormBackward, kSoftmaxBackward, kRopeBackward,
  kEmbeddingBackward, kCrossEntropy, kCrossEntropyBackward,
};
inline constexpr std::size_t kMemoryOpCount = 19;
std::string_view memory_op_name(MemoryOp op);                     // "silu_mul", "rmsnorm_backward", ...
std::optional<MemoryOp> memory_op_from_name(std::string_view name);

}  // namespace exasim::models
