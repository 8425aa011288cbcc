#pragma once
// The builders of a layer's ops (transformer_ops.hpp Op), shared by the files that list a layer's
// ops: the dense layer (transformer_ops.cpp) and the mixture-of-experts MLP (moe_ops.cpp).
#include <string_view>
#include <vector>

#include "workloads/training/transformer_ops.hpp"

namespace exasim::workloads::op_builders {

// C[m,n] = A[m,k] B[k,n], `batch` times; operands and output of `e` bytes each.
Op gemm(std::string_view name, double m, double n, double k, double e, double batch = 1);
// dW = X^T dY: the gradient of a weight, needed only by the optimizer.
Op weight_gradient(std::string_view name, double m, double n, double k, double e);
// A GEMM that runs in the 16-bit activation type even in fp8 training because Transformer Engine
// does not wrap it: Megatron-Core's LM head (tensor_parallel.ColumnParallelLinear), its MoE router
// (a plain linear, often fp32), the batched matmuls of an unfused attention core, LoRA adapters
// (rank-wide: they gain nothing from fp8).
Op sixteen_bit(Op op);
// A fused streaming kernel of `bytes` and `flops` (dropout + add, an fp8 cast, ...).
Op memory(std::string_view name, double bytes, double flops = 0);
// A memory-bound kernel the models know; its bytes and FLOPs are the model's.
Op memory(std::string_view name, models::MemoryOp kind, const LayerDims& d, double rows, double cols);
// A token-permute kernel of an MoE layer (models::gather_kernel): rows moved by an index.
Op gather(std::string_view name, double bytes);
// A collective of one of the GPU's groups; nothing when the group has one GPU.
void group_comm(std::vector<Op>& ops, std::string_view name, sim::CommKind kind, double bytes, CommGroup group, int size);

}  // namespace exasim::workloads::op_builders
