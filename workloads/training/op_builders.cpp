#include "workloads/training/op_builders.hpp"

namespace exasim::workloads::op_builders {

Op gemm(std::string_view name, double m, double n, double k, double e, double batch) {
  Op op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.m = m, op.n = n, op.k = k, op.batch = batch;
  op.flops = 2 * m * n * k * batch;
  op.bytes = (m * k + k * n + m * n) * e * batch;
  return op;
}

// dW = X^T dY: the gradient of a weight, needed only by the optimizer.
Op weight_gradient(std::string_view name, double m, double n, double k, double e) {
  Op op = gemm(name, m, n, k, e);
  op.weight_grad = true;
  return op;
}

// A GEMM that runs in the 16-bit activation type even in fp8 training because Transformer Engine
// does not wrap it: Megatron-Core's LM head (tensor_parallel.ColumnParallelLinear), its MoE router
// (a plain linear, often fp32), the batched matmuls of an unfused attention core, LoRA adapters
// (rank-wide: they gain nothing from fp8).
Op sixteen_bit(Op op) {
  op.activation_precision = true;
  return op;
}

Op memory(std::string_view name, double bytes, double flops) {
  Op op;
  op.name = name;
  op.kind = OpKind::kMemory;
  op.bytes = bytes;
  op.flops = flops;
  return op;
}

// A token-permute kernel of an MoE layer (models::gather_kernel): rows moved by an index.
Op gather(std::string_view name, double bytes) {
  Op op = memory(name, bytes);
  op.gather = true;
  return op;
}

// A memory-bound kernel the models know; its bytes and FLOPs are the model's.
Op memory(std::string_view name, models::MemoryOp kind, const LayerDims& d, double rows, double cols) {
  const models::MemoryTraffic t = models::memory_op_traffic(kind, d.act_dtype, rows, cols);
  Op op = memory(name, t.bytes, t.flops);
  op.memory_op = kind;
  op.rows = rows, op.cols = cols;
  return op;
}

// A collective of one of the GPU's groups; nothing when the group has one GPU.
void group_comm(std::vector<Op>& ops, std::string_view name, sim::CommKind kind, double bytes, CommGroup group, int size) {
  if (size <= 1) return;
  Op op;
  op.name = name;
  op.kind = OpKind::kComm;
  op.comm = kind;
  op.comm_bytes = bytes;
  op.group = group;
  ops.push_back(op);
}


}  // namespace exasim::workloads::op_builders
