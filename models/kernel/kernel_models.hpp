#pragma once
// The kernel-time API that the training and serving layers call: pure functions of a GPU spec,
// calibration parameters, a dtype and a shape. Stable interface; the models behind it are
//   GEMM           gemm_model.hpp       CTA tiles, waves over SMs, split-K, L2 reuse, launch
//   attention      attention_model.hpp  FlashAttention fwd/bwd tiles; paged decode with split-KV
//   memory-bound   memory_op_model.hpp  bytes over the achieved HBM bandwidth, launch
// Parameters: KernelParams (kernel_params.hpp), defaults per GPU family or a calibration file.
// All functions are thread-safe and allocation-free (planner inner loops call them millions of
// times); shapes are doubles so that averaged shapes (mean context length) are allowed.
#include <optional>
#include <string_view>

#include "hw/dtype.hpp"
#include "hw/gpu_spec.hpp"
#include "models/kernel/gemm_recipe.hpp"
#include "models/kernel/kernel_cost.hpp"
#include "models/kernel/kernel_params.hpp"
#include "models/kernel/memory_op.hpp"

namespace exasim::models {

// C[m,n] = A[m,k] · B[k,n] for `batch` independent products (batch > 1: a strided batched GEMM
// in one launch). Operands and output in `dtype` (fp32 accumulation). For a linear layer over
// T tokens: m = T, n = output features, k = input features. Decode (m = 1..64) comes out
// HBM-bound on the weight bytes; large training GEMMs come out matrix-bound.
// `recipe`: how the operands are stored and scaled (gemm_recipe.hpp); 8- and 4-bit GEMMs write
// 16-bit results.
KernelCost gemm_time(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n, double k,
                     double batch = 1, GemmRecipe recipe = GemmRecipe::kDense);
// The grouped GEMM of a fused MoE op: `groups` products of m x n x k (the active experts, m their
// mean rows), tiled and scheduled as one batched GEMM at the MoE kernels' own matrix and HBM
// efficiency (KernelParams::moe_gemm_efficiency, moe_gemm_hbm_efficiency; unset: the dense GEMM's).
KernelCost grouped_gemm_time(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n,
                             double k, double groups, GemmRecipe recipe = GemmRecipe::kDense);

// Attention over `batch` sequences. Prefill/training: every sequence has seq_q new query tokens
// attending to seq_kv key/value tokens (seq_kv = seq_q for training and full prefill; past +
// chunk for chunked prefill). heads: query heads on this GPU; kv_heads: key/value heads on this
// GPU (fewer for GQA/MQA); causal masking skips the tiles above the diagonal.
struct AttentionShape {
  double batch = 1;
  double seq_q = 0;
  double seq_kv = 0;     // 0: same as seq_q
  double heads = 0;
  double kv_heads = 0;   // 0: same as heads
  double head_dim = 128;
  bool causal = true;
  // Sliding-window attention (causal): each query sees the `window` latest keys, itself
  // included; 0: no window. The kernel skips the key blocks outside every row's band.
  double window = 0;
  // V's (and O's) head dimension where it differs from Q's and K's: DeepSeek's multi-head latent
  // attention in prefill runs as MHA with Q, K of 192 (128 + 64 rotary) and V of 128. 0: head_dim.
  double value_dim = 0;
};
// FlashAttention-2 style forward (prefill, training forward).
KernelCost attention_prefill(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, const AttentionShape& s);
// FlashAttention-2 style backward (dQ, dK, dV; recomputes the scores).
KernelCost attention_backward(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, const AttentionShape& s);

// Which decode kernels run. TensorRT-LLM's (what the kernels-aic tables measured): XQA /
// trtllm-gen for GQA groups, the group's heads as the rows of 16-row MMAs, MMHA per head, the
// split-KV partials reduced inside the kernel by the last CTA of each head. CUDA-core paged
// attention (vLLM's paged_attention_v1/v2): every dot product on the vector units, the partials
// reduced by a second kernel.
enum class DecodeKernels { kTensorRtLlm, kCudaCorePaged };

// Decode attention: one new query token per sequence over a paged KV cache of `context` tokens
// per sequence (the mean when lengths differ). Streams the KV bytes from HBM; long contexts are
// split over several CTAs (FlashDecoding split-KV) so that small batches still fill the SMs.
// `dtype` is the KV-cache dtype.
struct DecodeShape {
  double batch = 1;
  double context = 0;
  double heads = 0;
  double kv_heads = 0;     // 0: same as heads
  double head_dim = 128;
  double block_tokens = 16; // paged-KV block size (vLLM default 16)
  DecodeKernels kernels = DecodeKernels::kTensorRtLlm;
  double value_dim = 0;    // V's head dimension where it differs from K's (0: head_dim)
  // One cached row per token and KV head serves as both K and V (V its first value_dim entries):
  // multi-head latent attention decoded in its absorbed form (DeepSeek-V2/V3; FlashMLA,
  // TensorRT-LLM's MLA generation kernel): every query head attends to the shared latent of
  // kv_lora_rank + rotary dims (512 + 64), K = the whole row, V = its first 512. Such a kernel
  // serves all the heads of a sequence together (never one CTA per head).
  bool shared_kv = false;
  // false: no split-KV, one CTA walks each sequence's whole cache (TensorRT-LLM's MLA decode on
  // A100 and L40S: kernels-aic, one sequence, 125 / 84 us per 1024 cached tokens whatever the heads).
  bool split_kv = true;
};
KernelCost attention_decode(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, const DecodeShape& s);

// Multi-head latent attention's per-head geometry (DeepSeek-V2/V3, Kimi K2: config.json
// qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128, kv_lora_rank 512).
struct MlaDims {
  double nope = 128, rope = 64, v = 128, kv_lora = 512;
};
// Its attention kernels as TensorRT-LLM runs them (what kernels-aic's MLA tables time): prefill
// un-absorbed, MHA with Q and K of nope + rope and V of v per head; decode absorbed, every query
// head over one shared latent row of kv_lora + rope per token (K the row, V its first kv_lora),
// in paged blocks of 64 tokens (FlashMLA's page size; the tables' collector does not record its).
AttentionShape mla_prefill_shape(double batch, double seq, double heads, const MlaDims& m = {});
DecodeShape mla_decode_shape(double batch, double context, double heads, const MlaDims& m = {});
// The MLA ops: the attention models above, with MLA's own efficiency and fixed cost where
// measured (KernelParams::mla_*; 0: the attention's). Both take the KV cache's dtype. Under an
// fp8 cache, TensorRT-LLM's context MLA on Hopper and Blackwell quantizes Q, K and V (K and V come
// out of the latent's up-projection in 16 bit) and runs its FMHA in fp8 (kernels-aic, fp8 over
// bf16 cache: 1.3-1.7x at 16-64 prompts of 512-1024 tokens, the quantize pass; 0.72-0.95x at one
// of 16384, the fp8 math); elsewhere the FMHA stays in bf16 (A100 0.97-1.02x, L40S 0.95-1.13x).
bool mla_prefill_runs_fp8(const hw::GpuSpec& gpu, DType cache);
KernelCost mla_prefill(const hw::GpuSpec& gpu, const KernelParams& p, DType cache, const AttentionShape& s);
KernelCost mla_decode(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, const DecodeShape& s);

// A serving framework's QKV preprocessing ahead of its attention kernel (TensorRT-LLM's
// QKV-preprocessing kernel, vLLM's rotary embedding and reshape_and_cache): reads the fused QKV
// projection of `tokens` tokens (heads + 2 kv_heads vectors of head_dim, in `act`), rotates Q
// and K, writes Q in the attention kernel's `q_dtype` and K, V into the cache in `cache_dtype`.
// A memory-bound kernel (streaming_kernel).
KernelCost qkv_preprocess(const hw::GpuSpec& gpu, const KernelParams& p, double tokens, double heads, double kv_heads,
                          double head_dim, DType act, DType q_dtype, DType cache_dtype);

// The input cast of a low-precision GEMM op (gemm_recipe.hpp InputCast): the [rows, cols] 16-bit
// input read (twice for a dynamic per-tensor scale) and written in `to`, with its scales.
// kNone costs nothing.
KernelCost input_cast(const hw::GpuSpec& gpu, const KernelParams& p, InputCast cast, DType to, double rows,
                      double cols);

// A GEMM op in one of the formats frameworks run (gemm_recipe.hpp GemmFormat): the cast of its
// [m x batch, k] 16-bit input (input_cast), then the GEMM in the format's dtype and recipe
// (gemm_time); what NVIDIA's kernel tables time as one op. Time, FLOPs and bytes of both; the
// GEMM's bound.
KernelCost gemm_op(const hw::GpuSpec& gpu, const KernelParams& p, const GemmFormat& format, double m, double n, double k,
                   double batch = 1);

// Memory-bound kernels: MemoryOp and its names are in memory_op.hpp.

// Bytes moved and FLOPs done by a memory-bound op (what memory_op() charges): callers that
// account traffic (reports, FLOP counts) use this so their numbers match the model's.
struct MemoryTraffic {
  double bytes = 0;
  double flops = 0;
};
MemoryTraffic memory_op_traffic(MemoryOp op, DType dtype, double rows, double cols);

KernelCost memory_op(const hw::GpuSpec& gpu, const KernelParams& p, MemoryOp op, DType dtype, double rows,
                     double cols);

// Any other streaming kernel (fused dropout + add, gradient norm, ...): `bytes` through HBM at
// memory_op_efficiency, `flops` on the vector units, one launch of memory_op_overhead.
KernelCost streaming_kernel(const hw::GpuSpec& gpu, const KernelParams& p, double bytes, double flops);

// A token-permute kernel of an MoE layer (rows gathered by an index, or the top-k rows of each
// token scaled and summed): `bytes` through HBM at gather_efficiency, one launch of
// memory_op_overhead.
KernelCost gather_kernel(const hw::GpuSpec& gpu, const KernelParams& p, double bytes, double flops);

}  // namespace exasim::models
