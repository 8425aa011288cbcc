#pragma once
// Attention kernels at the level of FlashAttention's CTA tiles (Dao, FlashAttention-2, 2023).
//
// Forward (prefill, training forward): one CTA per (sequence, query head, Br = 128 query rows)
// walks the key/value tiles of Bc keys that its rows can see (all of them, or those up to the
// diagonal when causal: causal masking about halves the work). Each visited tile costs
// 4 Br Bc d FLOPs on the matrix units (QK^T and PV) at attention_efficiency of the per-SM peak
// (softmax, rescaling and masking share the SM with the MMAs). The CTAs are packed on the SMs
// longest first: the kernel takes max(total work / SMs, the longest CTA). K and V come from
// HBM once per key/value head (the query heads of a GQA group hit them in L2), Q is read and O
// written once; every CTA streams its K/V tiles through L2.
//
// Backward: one CTA per (sequence, head, Bc = 128 key columns) walks the query tiles below the
// diagonal: 5 matrix products (QK^T recomputed, dV, dP, dK, dQ) = 2.5x the forward FLOPs at
// attention_backward_efficiency, with dQ accumulated in fp32 through L2 atomics; plus the
// preprocessing (rowsum(dO o O)) and dQ-conversion kernels.
//
// Decode: FlashDecoding / vLLM paged attention. One query token per sequence reads the whole
// KV cache of its context; the kernel is a stream of KV bytes from HBM. CTAs = sequences x KV
// heads x splits, with the context split (split-KV) until the CTAs fill the SMs; each CTA keeps
// two paged blocks in flight (Little's law); splits > 1 add a reduction, inside the kernel
// (TensorRT-LLM) or as a second one (CUDA-core paged attention). The dot products of a grouped
// CTA serving a GQA group run on the matrix units (the group's heads as MMA rows, padded to 16),
// those of one head per K/V row on the vector units (DecodeKernels).
#include "hw/dtype.hpp"
#include "hw/gpu_spec.hpp"
#include "models/kernel/kernel_models.hpp"

namespace exasim::models {

// (query, key) pairs of causal attention over positions [0, n) under a sliding window of w keys:
// min(p + 1, w) keys for the query at p (w >= n: plain causal, n (n + 1) / 2).
double band_pairs(double n, double w);

// FlashAttention tile sizes of one kernel (FA2 on sm80/sm90 for head_dim <= 128; halved rows
// for larger heads, which do not fit the register file otherwise).
struct AttentionTiles {
  double rows = 128;  // Br: query rows per CTA (forward) or per step (backward: 64)
  double cols = 64;   // Bc: keys per step (forward) or per CTA (backward: 128)
};
// The forward's tiles on `gpu`. Hopper's and Blackwell's kernels (FA3, TensorRT-LLM's, cuDNN's:
// warpgroup MMAs, the accumulator spread over two or three warpgroups) keep 128 query rows up to
// head_dim 256. kernels-aic, one head of one sequence, causal: throughput doubles with the prompt
// up to 16384 tokens at head_dim 192 and 256 on H100 (132 SMs: at most 128 CTAs of 128 rows) and
// in MLA prefill (Q/K 192, V 128) on H100, H200, B200, GB200; on A100 and L40S it stops at 8192
// (64 rows).
AttentionTiles flash_forward_tiles(const hw::GpuSpec& gpu, double head_dim);

// The forward's softmax on one SM, per (query, key) pair of a tile: one exponential on the
// special-function units, which Hopper's and Blackwell's kernels do not hide behind their MMAs
// (their matrix units outrun the SFUs: FlashAttention-3's paper, H100, 989 TFLOP/s of bf16 MMA,
// 3.9 T exponentials a second). kernels-aic, the best bf16 prefill of 2048+ tokens: H100 456 /
// 564 TFLOP/s at head_dim 64 / 128, B200 760 / 1109, both 4 d / R + x a pair with x = 0.215 /
// 0.212 ps for the GPU, its exponentials at 16 a clock an SM giving 0.239 / 0.215 ps. On Ampere
// and Ada, 0: their tables show no such term (A100's has head_dim 128 only; L40S's runs 165 / 156
// / 170 TFLOP/s at 64 / 128 / 256, its MMAs slow enough to hide it).
double softmax_time_per_pair(const hw::GpuSpec& gpu);
AttentionTiles flash_backward_tiles(double head_dim);

// KV-cache splits FlashDecoding would use for this shape on this GPU.
int decode_kv_splits(const hw::GpuSpec& gpu, const DecodeShape& s);

// How a decode step is launched: a grouped kernel (a CTA per sequence, KV head and split) or,
// for GQA groups above KernelParams::decode_group_limit, a per-head one (a CTA per sequence,
// query head and split); and its KV splits.
struct DecodeLaunch {
  bool grouped = true;
  int splits = 1;
  double ctas = 0;
};
DecodeLaunch decode_launch(const hw::GpuSpec& gpu, const KernelParams& p, const DecodeShape& s);
// The launch of MLA's decode (mla_decode), its split-KV as the parameters say.
DecodeLaunch mla_decode_launch(const hw::GpuSpec& gpu, const KernelParams& p, const DecodeShape& s);

}  // namespace exasim::models
