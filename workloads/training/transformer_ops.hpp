#pragma once
// The operations of one transformer layer (and of the embedding and LM head) for one
// micro-batch on one GPU of a tensor-parallel group, in execution order, with their shapes,
// FLOPs and bytes. Communication ops mark where the layer waits for its TP group.
#include <optional>
#include <string_view>
#include <vector>

#include "models/kernel/kernel_models.hpp"
#include "sim/network_backend.hpp"
#include "workloads/model/model_spec.hpp"
#include "workloads/training/training_config.hpp"

namespace exasim::workloads {

// kHost: host work the GPU's next step waits for (host_units x a host overhead constant).
enum class OpKind { kGemm, kAttention, kMemory, kComm, kHost };
// kContext: the context-parallel ring (cp ranks holding slices of the same sequences).
// kExpert: the expert-parallel group (token all-to-all of mixture-of-experts layers).
// kExpertTensor: the ranks that split each routed expert's MLP (expert tensor parallelism).
enum class CommGroup { kTensor, kData, kContext, kExpert, kExpertTensor };

struct Op {
  std::string_view name;
  OpKind kind = OpKind::kMemory;
  // kGemm: batch x [m,k]x[k,n]
  double m = 0, n = 0, k = 0, batch = 1;
  // kGemm: run as `chunks` consecutive kernels over m / chunks rows each (Transformer Engine's
  // userbuffers split a GEMM to pipeline it with its TP collective)
  int chunks = 1;
  bool weight_grad = false;  // a weight-gradient GEMM (zero-bubble schedules run these separately)
  bool activation_precision = false;  // kGemm: in the 16-bit activation type even in fp8 training (LoRA adapters)
  // The lowering starts a task at this op, so that an asynchronous collective after it runs
  // beside exactly this kernel.
  bool own_task = false;
  // kAttention: a FlashAttention kernel (forward or backward) over these sequences
  models::AttentionShape attention;
  bool backward = false;
  // kMemory: a known memory-bound kernel over [rows, cols] (models::memory_op), or, when
  // memory_op is empty, a fused streaming kernel of `bytes` and `flops` (dropout + add, ...)
  std::optional<models::MemoryOp> memory_op;
  bool gather = false;  // kMemory: an MoE token-permute kernel (models::gather_kernel)
  double rows = 0, cols = 0;
  // Work and traffic of every compute op, for reports (the models charge the same figures)
  double flops = 0;
  double bytes = 0;
  // kHost: how many units of the host's per-expert dispatch (models::HostOverheads)
  double host_units = 0;
  // kComm
  sim::CommKind comm = sim::CommKind::kAllReduce;
  double comm_bytes = 0;
  CommGroup group = CommGroup::kTensor;
  // Asynchronous: issued once the compute before the op just ahead of it is done, it runs beside
  // that op (an own_task kernel); what follows waits for both.
  bool async = false;
};

// Per-micro-batch dimensions that every op builder needs.
struct LayerDims {
  double tokens = 0;      // s * b / cp: the tokens this GPU holds
  double seq = 0;         // s
  double micro_batch = 0; // b
  double hidden = 0;      // h
  double heads = 0;       // a (per GPU: a / t)
  double kv_heads = 0;    // per GPU
  double head_dim = 0;
  double ffn = 0;         // per GPU: ffn / t
  double vocab = 0;       // per GPU: vocab / t
  double act_bytes = 2;   // bytes per activation element
  DType act_dtype = DType::kBf16;
  int tp = 1;
  int cp = 1;              // context parallel: the sequence is split over cp GPUs
  // Mixture of experts (set for a routed layer: with_moe_layer): experts, experts per token, a
  // routed expert's intermediate size, always-on shared experts, expert-parallel degree.
  bool moe = false;
  double experts = 0, top_k = 0, expert_ffn = 0, shared_experts = 0;
  int ep = 1;
  int etp = 1;            // expert tensor parallel: each routed expert's MLP split over etp GPUs
  double imbalance = 1;  // tokens of the busiest expert-parallel rank over the mean (of this layer)
  MoeBalance balance;    // where `imbalance` comes from
  // The dimensions of routed layer `layer` of `model` (unchanged for a dense layer).
  LayerDims for_layer(const ModelSpec& model, int layer) const;
  bool sp = false;        // sequence parallel
  bool tp_async_backward = false;  // TrainingConfig::tp_backward_overlap, with tp > 1
  bool tp_userbuffers = false;     // TrainingConfig::tp_comm_overlap under SP: GEMMs chunked beside their collectives
  bool gated = false;
  bool rope = false;
  bool rms_norm = false;  // RMSNorm (Llama family) instead of LayerNorm (GPT)
  // Multi-head latent attention (DeepSeek-V2/V3): low-rank Q and KV projections, per-head query/
  // key width qk_nope + qk_rope and value width v_head. head_dim is then (qk + v) / 2, which
  // gives FlashAttention's FLOPs and K/V bytes.
  bool mla = false;
  double q_lora = 0, kv_lora = 0, qk_rope = 0, qk_nope = 0, v_head = 0;
  bool flash = true;
  bool fp8 = false;       // fp8 GEMMs: operands are cast (and scaled) from 16-bit first
  bool fused_cross_entropy = true;
  double causal_fraction = 0.5;  // share of the score matrix a causal flash kernel computes
  double window = 0;             // sliding-window attention: keys a query sees (0: all before it)
  // LoRA (TrainingConfig::lora): the base weights get no gradients; adapters of its rank on the
  // targeted linear layers run beside them.
  std::optional<LoraConfig> lora;
  bool frozen() const { return lora.has_value(); }

  static LayerDims from(const ModelSpec& model, const TrainingConfig& cfg);
  // Tokens an op outside the TP-split region touches (split by t under sequence parallelism).
  double replicated_tokens() const { return sp ? tokens / tp : tokens; }
};

std::vector<Op> layer_forward(const LayerDims& d);
std::vector<Op> layer_backward(const LayerDims& d);
// What recompute re-runs before a layer's backward: nothing, the attention core (selective),
// or the whole forward (full).
std::vector<Op> layer_recompute(const LayerDims& d, models::Recompute policy);

std::vector<Op> embedding_forward(const LayerDims& d);
std::vector<Op> embedding_backward(const LayerDims& d);
std::vector<Op> head_forward(const LayerDims& d);   // final norm, logits, loss
std::vector<Op> head_backward(const LayerDims& d);

}  // namespace exasim::workloads
