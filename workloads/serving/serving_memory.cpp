#include "workloads/serving/serving_memory.hpp"

#include <algorithm>
#include <cmath>

#include "hw/error.hpp"
#include "hw/units.hpp"

namespace exasim::workloads::serving {

namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// Bytes per weight of the decoder layers' linear layers in `precision`. NVFP4 adds one e4m3 scale
// per 16 values (NVIDIA, "Introducing NVFP4 for efficient and accurate low-precision inference",
// 2025): 0.5 + 1/16 B.
double linear_weight_bytes(DType precision) { return dtype_bytes(precision) + (precision == DType::kFp4 ? 1.0 / 16 : 0.0); }

// Weight bytes on the GPU of the heaviest pipeline stage, before the TP split. Quantized
// checkpoints (ModelOpt FP8/NVFP4, as TensorRT-LLM and vLLM load them) quantize the decoder's
// linear layers only; the embedding and the LM head stay in 16 bit (precisions below 16 bit).
double stage_weight_bytes(const ModelSpec& m, int pp, DType precision) {
  const double layers = m.parameter_count() - m.embedding_parameter_count() - m.head_parameter_count();
  const double per_stage = layers / m.layers * std::ceil(static_cast<double>(m.layers) / pp);
  const double outer = pp == 1 ? m.embedding_parameter_count() + m.head_parameter_count()
                               : std::max(m.embedding_parameter_count(), m.head_parameter_count());
  const double outer_bytes = std::max(dtype_bytes(precision), 2.0);
  return per_stage * linear_weight_bytes(precision) + outer * outer_bytes;
}

// Per-GPU KV bytes of one token on a stage of `layers` layers under TP `tp`.
double kv_per_token_per_gpu(const ModelSpec& m, double layers, int tp, DType kv) {
  if (m.mla) return layers * d(m.mla->kv_lora_rank + m.mla->qk_rope_head_dim) * dtype_bytes(kv);  // replicated over TP
  const int kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const double heads = std::max(1.0, static_cast<double>(kv_heads) / tp);
  return 2 * layers * heads * d(m.head_dimension()) * dtype_bytes(kv);
}

std::string gib(double b) { return units::format(b, units::Dimension::kBytes, 3); }

}  // namespace

double kv_cache_bytes(const ModelSpec& m, double tokens, DType kv_dtype) {
  if (m.mla) return m.layers * d(m.mla->kv_lora_rank + m.mla->qk_rope_head_dim) * tokens * dtype_bytes(kv_dtype);
  const int kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
  return 2.0 * m.layers * kv_heads * d(m.head_dimension()) * tokens * dtype_bytes(kv_dtype);
}

std::int64_t ReplicaMemory::kv_tokens() const { return kv_blocks * block_tokens; }

ReplicaMemory replica_memory(const ModelSpec& m, const PoolConfig& pool, const ServingConfig& cfg) {
  const int tp = pool.parallelism.tp, pp = pool.parallelism.pp;
  ReplicaMemory r;
  r.block_tokens = cfg.block_tokens;
  r.usable_bytes = pool.gpu.hbm_capacity_bytes * (cfg.kv_free_memory_fraction > 0 ? 1.0 : cfg.gpu_memory_utilization);
  r.weights_bytes = stage_weight_bytes(m, pp, cfg.precision) / tp;
  if (cfg.speculative) r.weights_bytes += stage_weight_bytes(cfg.speculative->draft, 1, cfg.precision) / tp;
  // Workspace: the live activations of the largest iteration (residual stream, QKV, gate+up and
  // activation outputs in 16 bit) and fp32 logits of the largest batch, as vLLM's profiling run
  // measures them.
  const double tokens = std::max(cfg.max_batch_tokens, cfg.chunked_prefill);
  const int kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const double qkv = (d(m.heads) + 2.0 * kv_heads) * d(m.head_dimension()) / tp;
  const double ffn = d(m.ffn) / tp * (m.gated_mlp ? 3 : 2);
  r.workspace_bytes = tokens * (2 * d(m.hidden) + qkv + ffn) * 2 + cfg.max_num_seqs * d(m.vocab) / tp * 4;
  const double layers = std::ceil(static_cast<double>(m.layers) / pp);
  r.kv_bytes_per_token = kv_per_token_per_gpu(m, layers, tp, cfg.kv_dtype);
  r.kv_bytes = r.usable_bytes - r.weights_bytes - r.workspace_bytes - r.runtime_bytes;
  if (cfg.kv_free_memory_fraction > 0) r.kv_bytes *= cfg.kv_free_memory_fraction;  // TensorRT-LLM
  const double block_bytes = r.kv_bytes_per_token * cfg.block_tokens;
  r.kv_blocks = r.kv_bytes > 0 ? static_cast<std::int64_t>(std::floor(r.kv_bytes / block_bytes)) : 0;
  if (r.kv_blocks <= 0) {
    throw PlanError("no room for the KV cache on " + pool.gpu.name + ": weights " + gib(r.weights_bytes) + " + workspace " +
                        gib(r.workspace_bytes) + " + runtime " + gib(r.runtime_bytes) + " per GPU exceed " +
                        gib(r.usable_bytes) + " (HBM x gpu_memory_utilization)",
                    {"", 0, "serving.parallelism"}, "raise tp or pp, lower max_batch_tokens, or use fp8 weights");
  }
  return r;
}

}  // namespace exasim::workloads::serving
