#pragma once
// Time of one serving iteration of a replica, from the kernel models: every kernel-time call of
// the serving layer is in iteration_cost.cpp. An iteration runs the whole model once over the
// batch's tokens: per layer the QKV, output and MLP GEMMs over all tokens, FlashAttention over
// each prefill chunk, paged decode attention over each decoding sequence's context, norms and
// activations, two TP all-reduces (collective model), MoE experts and all-to-alls; then the LM
// head over the sequences that sample. Multi-head latent attention (DeepSeek-V2/V3, Kimi K2)
// runs as the engines run it: latent projections, un-absorbed prefill, absorbed decode over the
// one cached latent row per token (the MLA kernels, whatever decode_attention says). Pipeline
// stages run one after the other for one batch; a fixed host (CPU) time per iteration is added,
// which the GPU does not overlap.
#include <cstdint>
#include <memory>
#include <vector>

#include "hw/dtype.hpp"
#include "hw/gpu_spec.hpp"
#include "models/collective/collective_model.hpp"
#include "models/collective/expert_all_to_all.hpp"
#include "models/kernel/kernel_params.hpp"
#include "workloads/model/model_spec.hpp"
#include "workloads/serving/serving_config.hpp"

namespace exasim::workloads::serving {

// A prefill chunk: `tokens` new prompt tokens of one sequence whose first `context` tokens are
// already in the KV cache (0 for a whole prompt; > 0 for later chunks or prefix-cache hits).
struct PrefillChunk {
  double tokens = 0;
  double context = 0;
};

// What one iteration processes.
struct BatchShape {
  std::vector<PrefillChunk> prefills;
  double decodes = 0;         // decoding sequences
  double decode_context = 0;  // sum over decoding sequences of the KV tokens each attends to
  // The same sum on a sliding-window layer: min(KV tokens, window) each (= decode_context
  // without a window; the cost model falls back to decode_context when this is not set)
  double decode_window_context = -1;
  double sampled = 0;         // sequences that emit a token (rows of the LM head)
  double swap_bytes = 0;      // KV bytes copied between GPU and host (swap preemption)
  double tokens() const;      // prefill tokens + one per decoding sequence (k+1 with speculation)
};

struct IterationTime {
  double total = 0;
  double linear = 0;         // GEMMs, norms, activations, embedding, LM head, and the TP
                             // all-reduces, EP all-to-alls and PP sends between them
  double attention = 0;      // prefill and decode attention
  double draft = 0;          // speculative decoding: the draft model's steps
  double swap = 0;           // host <-> GPU KV copies
  double cpu = 0;            // per-iteration host overhead
};

struct CostModelInputs {
  ModelSpec model;
  hw::GpuSpec gpu;
  models::KernelParams kernel;
  models::CollectiveParams collective;
  models::GroupLinks links;   // the replica's fabric (TP/EP/PP collectives)
  int gpus_per_node = 8;
  ReplicaParallelism parallelism;
  DType precision = DType::kBf16;
  DType kv_dtype = DType::kBf16;
  double cpu_overhead_s = 0;
  double host_link_bandwidth = 0;  // B/s GPU <-> host (PCIe) for swapping
  const SpeculativeConfig* speculative = nullptr;
  bool decode_attention_matrix = false;  // ServingConfig::decode_attention_matrix
  MoeAllToAll moe_all_to_all = MoeAllToAll::kNccl;  // ServingConfig::moe_all_to_all
};

// The expert all-to-all phases an MoE layer's exchange runs on `kind` (none for NCCL): DeepEP's
// normal kernel, or its low-latency one for a decode-only iteration, fp8 dispatch and bf16
// combine as measured; TensorRT-LLM's NVLink prepare, dispatch in the serving precision's format
// (fp8, nvfp4 for fp4, else bf16) and bf16 combine.
std::vector<models::ExpertAllToAllKey> expert_exchange_keys(MoeAllToAll kind, DType precision, bool decode_only);

class IterationCostModel {
 public:
  explicit IterationCostModel(CostModelInputs in);
  ~IterationCostModel();
  IterationCostModel(IterationCostModel&&) noexcept;
  IterationCostModel& operator=(IterationCostModel&&) noexcept;

  IterationTime time(const BatchShape& batch) const;
  // Convenience shapes: one whole prompt; one decode step of `batch` sequences at `context`.
  double prefill_time(double prompt_tokens) const;
  double decode_step_time(double batch, double context) const;

  // Parts, exposed for tests that recompute them from the kernel models by hand. decode_only: an
  // iteration without prefill tokens (DeepEP's low-latency kernels then, moe_all_to_all deepep).
  double linear_time(double tokens, double sampled, bool decode_only = false) const;  // all layers + embedding + LM head, comm included
  double attention_time(const BatchShape& batch) const;      // all layers

  const CostModelInputs& inputs() const { return in_; }

 private:
  double layer_linear_time(double tokens, bool moe_layer) const;
  double layer_attention_time(const BatchShape& batch, double window) const;  // one layer; window 0: full
  double layer_comm_time(double tokens, bool moe_layer, bool decode_only) const;
  // An MoE layer's dispatch and combine on the expert all-to-all kernels (moe_all_to_all not nccl).
  double expert_exchange_time(double tokens, bool decode_only) const;
  double head_time(double sampled) const;
  double cached_linear(std::int64_t tokens, bool decode_only) const;

  CostModelInputs in_;
  std::unique_ptr<IterationCostModel> draft_;
  mutable std::vector<double> linear_cache_;  // by token count: linear time without the LM head
  mutable std::vector<double> decode_linear_cache_;  // the same for decode-only iterations, where they differ
};

}  // namespace exasim::workloads::serving
