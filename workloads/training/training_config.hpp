#pragma once
// What a training job asks for: batch, precision and the parallel plan (scenario `training:`).
#include <memory>
#include <optional>
#include <string>

#include "hw/dtype.hpp"
#include "models/memory/activation_memory.hpp"
#include "workloads/training/moe_routing.hpp"

namespace exasim::workloads {

struct Parallelism {
  int tp = 1;   // tensor
  int pp = 1;   // pipeline stages
  int dp = 1;   // data
  int cp = 1;   // context
  int ep = 1;   // expert
  int etp = 1;  // expert tensor parallel: each routed expert's MLP split over etp GPUs (MoE parallel folding)
  int vpp = 1;  // virtual stages per pipeline rank (interleaved schedule)
  bool sequence_parallel = false;
  int gpus() const { return tp * pp * dp * cp; }
};

enum class AttentionKernel { kFlash, kUnfused };

// Low-rank adaptation (Hu et al. 2021, LoRA; NeMo/Megatron PEFT): the pretrained weights, the
// embedding and the head are frozen (no weight gradients, no optimizer states, no gradient
// reduction); each targeted linear layer W (in x out) gains trainable A (in x rank) and
// B (rank x out), y = x W + (x A) B. Input gradients still flow through every layer.
struct LoraConfig {
  int rank = 32;  // NeMo's default adapter_dim
  // Targets (NeMo's target_modules): attention_qkv (its default), attention_dense, mlp_fc1, mlp_fc2
  bool qkv = true, attn_out = false, mlp_up = false, mlp_down = false;
};

struct TrainingConfig {
  int seq_len = 0;
  int global_batch = 0;  // sequences per iteration
  int micro_batch = 1;
  DType precision = DType::kBf16;
  Parallelism parallelism;
  std::string pipeline_schedule = "1f1b";
  int first_stage_layers = 0;  // uneven pipeline split: layers of the first / last virtual stage
  int last_stage_layers = 0;   // (0 and 0 = even split)
  int zero = 0;  // 0..3
  // Hybrid sharding: ZeRO/FSDP shards the states over groups of this many of the dp x cp ranks
  // that hold the same weights and replicates them across the groups (PyTorch FSDP HYBRID_SHARD
  // with a node per group, DeepSpeed ZeRO++ hpZ, Megatron-Core's distributed-optimizer
  // instances). 0: one group of all of them.
  int shard_group = 0;
  models::Recompute recompute = models::Recompute::kNone;
  // With full recompute: recompute only the first N layers of each model chunk and keep the
  // others' activations (Megatron-LM --recompute-method block --recompute-num-layers N), the
  // setting that trades memory for time layer by layer. 0: every layer.
  int recompute_layers = 0;
  // The policy of the layer at `index` (0-based) within its model chunk.
  models::Recompute recompute_of_layer(int index) const {
    if (recompute != models::Recompute::kFull || recompute_layers == 0) return recompute;
    return index < recompute_layers ? models::Recompute::kFull : models::Recompute::kNone;
  }
  std::string offload = "none";
  // Fused (FlashAttention) or unfused attention (scores materialized, as Megatron-LM before 2022).
  AttentionKernel attention = AttentionKernel::kFlash;
  bool overlap_grad_reduce = true;  // DP gradient reduction overlapped with the backward pass
  // ZeRO-1/2: the all-gather of the updated weight shards runs during the next iteration's first
  // forward pass, a bucket ahead of the layer that needs it (Megatron-Core --overlap-param-gather),
  // instead of after the optimizer step.
  bool overlap_param_gather = false;
  bool tp_comm_overlap = false;     // TP collectives pipelined with their GEMMs (Megatron-Core --tp-comm-overlap)
  // Megatron-LM's asynchronous TP communication in the backward pass (2022 on: the column-parallel
  // layers' input-gradient all-reduce, or under SP its reduce-scatter, runs beside the weight-
  // gradient GEMM, and SP's re-gather of the layer input beside the input-gradient GEMM), without
  // tp_comm_overlap's pipelining of every collective. Scenario: tp_comm_overlap: backward.
  bool tp_backward_overlap = false;
  // The loss: one fused kernel over the logits (Megatron-Core --cross-entropy-loss-fusion, NeMo's
  // default) or Megatron-LM's vocab-parallel cross entropy in PyTorch ops (fp32 copy, then max,
  // subtract, exp, sum and divide passes; the backward scales the saved softmax in place).
  bool fused_cross_entropy = true;
  // Mixture of experts: tokens the busiest expert-parallel rank receives over the mean (>= 1; 1 =
  // balanced routing, as Megatron's force-balanced benchmarks). The all-to-alls wait for it.
  double moe_load_imbalance = 1.0;
  std::shared_ptr<const MoeRouting> moe_routing;  // a router log instead (training.moe_routing_trace)
  double moe_capacity_factor = 0;  // 0: dropless; else tokens beyond factor x an expert's share are dropped
  bool moe_pad_to_capacity = false;  // experts always run their full capacity
  std::optional<LoraConfig> lora;     // fine-tuning with LoRA adapters (training.lora); none: every weight trains
};

}  // namespace exasim::workloads
