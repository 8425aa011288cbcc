#pragma once
// Memory of one serving replica per GPU: weights, activation workspace and runtime reserve come
// off the HBM share the engine may use (gpu_memory_utilization, vLLM's semantics); what is left
// holds the paged KV cache. With kv_cache_free_memory_fraction (TensorRT-LLM's semantics) the KV
// cache takes that share of what is left of the whole HBM instead.
// Blocks here are blocks of every layer; with a sliding-window model the KV block manager counts
// a sequence's blocks by what its layers keep (KvBlockManager::set_sliding_window, serving key
// sliding_window_kv).
#include <cstdint>

#include "hw/dtype.hpp"
#include "workloads/model/model_spec.hpp"
#include "workloads/serving/serving_config.hpp"

namespace exasim::workloads::serving {

// CUDA context, cuBLAS/NCCL workspaces and CUDA graphs: memory outside the model's tensors.
// Stated estimate: vLLM's memory profiler reports ~1-2 GiB of such "non-torch" memory on a
// Hopper GPU; we take 1.5 GiB per GPU.
inline constexpr double kRuntimeReserveBytes = 1.5 * (1ull << 30);

// KV bytes of `tokens` tokens of the whole model (all layers, all KV heads):
// 2 (K and V) x layers x kv_heads x head_dim x tokens x dtype size. MLA models cache the
// compressed latent and the rope key instead: layers x (kv_lora_rank + rope dim) x tokens x size.
double kv_cache_bytes(const ModelSpec& model, double tokens, DType kv_dtype);

struct ReplicaMemory {
  double usable_bytes = 0;      // per GPU: HBM x gpu_memory_utilization (whole HBM with the free fraction)
  double weights_bytes = 0;     // per GPU (heaviest pipeline stage), draft model included
  double workspace_bytes = 0;   // per GPU: activations of the largest iteration + logits
  double runtime_bytes = kRuntimeReserveBytes;
  double kv_bytes = 0;          // per GPU, for the KV cache
  double kv_bytes_per_token = 0;  // per GPU
  std::int64_t kv_blocks = 0;
  std::int64_t kv_tokens() const;
  int block_tokens = 16;
};

// Throws PlanError (key "serving") when the weights and workspace leave no room for KV.
ReplicaMemory replica_memory(const ModelSpec& model, const PoolConfig& pool, const ServingConfig& cfg);

}  // namespace exasim::workloads::serving
