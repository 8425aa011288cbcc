#pragma once
// The model FLOPs that MFU counts (Megatron's formula), apart from the FLOPs the simulated
// kernels execute: matmul parameters and full (non-causal) attention per token, recompute not
// included.
#include "workloads/model/model_spec.hpp"
#include "workloads/training/training_config.hpp"

namespace exasim::workloads {

// Model FLOPs of one micro-batch forward for the whole model on the whole TP group, as the
// Megatron formula counts them: 2 x tokens x matmul parameters + full (non-causal) attention
// 4 s^2 h-equivalent + logits. MFU uses 3 x this per micro-batch.
double model_forward_flops(const ModelSpec& model, const TrainingConfig& cfg);
// Model FLOPs of a training step per forward's: 3 (forward, input and weight gradients), or 2 with
// LoRA's frozen weights (no weight gradients; the adapters' rank-wide GEMMs are not counted, as
// NeMo's LoRA throughput figures do not count them).
double step_flops_per_forward(const TrainingConfig& cfg);

}  // namespace exasim::workloads
