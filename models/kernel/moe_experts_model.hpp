#pragma once
// The routed experts of one mixture-of-experts layer on one GPU, as an inference framework's
// fused MoE op runs them (TensorRT-LLM's CUTLASS MoE; what AIConfigurator's moe_perf tables
// time): routing, the token copies gathered by expert, two grouped GEMMs, the activation between
// them, and the weighted sum back into token order. No communication (the dispatch and combine
// all-to-alls are collectives). Kernels, each priced by the model of its kind:
//   route      top-k over the router's [T, E] logits (softmax-like, one row per token)
//   permute    sort the T top_k picks by expert (a few launch-bound index kernels) and gather
//              the rank's copies into expert order, cast to the GEMM's dtype on the way (the
//              low-precision formats quantize here, so no separate input cast runs)
//   up         grouped GEMM: each active expert's copies x [hidden, up x ffn]
//   act        silu_mul (gated) or gelu over the copies
//   down       grouped GEMM: each active expert's copies x [ffn, hidden]
//   finalize   each token's top_k outputs, scaled and summed (reads the copies, writes T rows)
// The gather and the finalize are token-permute kernels (gather_kernel: their own bandwidth).
// The grouped GEMMs are priced as one batched GEMM over the active experts with the mean copies
// per expert as M (each expert's tiles padded to the tile, the waves over all of them), their
// main loop at the MoE kernels' own matrix efficiency (grouped_gemm_time).
#include "hw/gpu_spec.hpp"
#include "models/kernel/expert_routing.hpp"
#include "models/kernel/gemm_recipe.hpp"
#include "models/kernel/kernel_cost.hpp"
#include "models/kernel/kernel_params.hpp"

namespace exasim::models {

struct MoeExpertsShape {
  double tokens = 0;      // tokens entering the layer on this GPU (every rank routes all of them)
  double hidden = 0;
  double expert_ffn = 0;  // this GPU's slice of one expert's FFN (its intermediate size / moe_tp)
  double top_k = 1;
  double experts = 1;     // experts of the layer (all ranks): the router's output width
  bool gated = true;      // SwiGLU (up projects to 2 x ffn) or a plain activation
  ExpertLoad load;        // this rank's active experts and token copies (expert_routing.hpp)
};

struct MoeExpertsCost {
  KernelCost route, permute, up, act, down, finalize;
  KernelCost total;  // their sum; bound: the longest one's
};

// `format`: the grouped GEMMs' operands (gemm_recipe.hpp; bfloat16, fp8, fp8_block, nvfp4, ...).
MoeExpertsCost moe_experts_time(const hw::GpuSpec& gpu, const KernelParams& p, const GemmFormat& format,
                                const MoeExpertsShape& s);

}  // namespace exasim::models
