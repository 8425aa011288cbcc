#pragma once
// Named, calibratable parameters of the kernel models (kernel_models.hpp): how far each unit of
// the GPU falls short of its datasheet peak, and the fixed costs of a launch and of a CTA tile.
// Every parameter is physical (a fraction of a spec value, a time, a byte count), so a fitted
// value can be checked for plausibility and carried to GPUs of the same family. Defaults per
// family are measured figures with their sources (kernel_params.cpp); `calibration:` files
// replace them.
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/cpu/cpu_params.hpp"
#include "models/kernel/gemm_recipe.hpp"
#include "models/kernel/memory_op.hpp"

namespace exasim::models {

struct KernelParams {
  // Matrix units: fraction of the per-SM dense peak that a CTA's main loop sustains.
  double matrix_efficiency = 0.85;
  // The same for fp8 operands (0: matrix_efficiency). Measured apart because 8-bit main loops
  // fall further short of their (doubled) peak on some families: H100 MAMF 0.709 fp8 vs 0.803 bf16.
  double matrix_efficiency_fp8 = 0;
  // The same per operand format and recipe (gemm_recipe.hpp), each measured apart; 0 falls back
  // as listed. fp4 (NVFP4, Blackwell) and int8 (SmoothQuant W8A8): to fp8's. fp8 with block
  // scales: to fp8's (Hopper promotes the partial sums on the CUDA cores every 128 K, so its
  // main loop falls short of per-tensor fp8's). Weight-only (int8/int4 weights dequantized to 16
  // bits in the main loop): to matrix_efficiency, as a fraction of the 16-bit peak.
  double matrix_efficiency_fp4 = 0;
  double matrix_efficiency_int8 = 0;
  double matrix_efficiency_block_fp8 = 0;
  double matrix_efficiency_weight_only = 0;
  double matrix_efficiency_for(DType dtype, GemmRecipe recipe = GemmRecipe::kDense) const {
    auto either = [](double v, double fallback) { return v > 0 ? v : fallback; };
    const double fp8 = either(matrix_efficiency_fp8, matrix_efficiency);
    if (recipe == GemmRecipe::kWeightOnly) return either(matrix_efficiency_weight_only, matrix_efficiency);
    if (recipe == GemmRecipe::kBlockScaled) return either(matrix_efficiency_block_fp8, fp8);
    switch (dtype) {
      case DType::kFp8: return fp8;
      case DType::kFp4: return either(matrix_efficiency_fp4, fp8);
      case DType::kInt8: return either(matrix_efficiency_int8, fp8);
      default: return matrix_efficiency;
    }
  }
  // Vector units (non-matrix FLOPs of memory-bound ops and attention softmax).
  double vector_efficiency = 0.6;
  // Fraction of the datasheet HBM bandwidth reached by streaming reads and writes.
  double hbm_efficiency = 0.8;
  // Fraction of GpuSpec::l2_bandwidth reached when all SMs load GEMM operand tiles from L2.
  double l2_efficiency = 0.5;
  // Per kernel: launch, front end, completion; what an empty kernel costs end to end.
  double launch_overhead_s = 4e-6;
  // Host side, per kernel launch: the framework's dispatch and cudaLaunchKernel before the GPU
  // sees the kernel. Not part of a kernel's time: a measurement of one op with the GPU idle
  // (SampleTiming::kLaunchIncluded, Vidur's PyTorch timings) adds it; the engine's host work
  // charges it per launch, exposed only where the host cannot run ahead of the GPU. 0: the
  // family's kernel parameters already carry it (fitted on launch-included measurements).
  double host_launch_overhead_s = 0;
  // Fixed GPU cost of the input cast of a low-precision GEMM op, per cast kernel (gemm_recipe.hpp
  // cast_kernel: static, per_tensor, per_group, per_group_fp4): the launches of its amax, scale
  // and cast kernels, beside the bytes it streams at cast_efficiency.
  std::array<double, kCastKernels> cast_overhead_s{2e-6, 6e-6, 3e-6, 3e-6};
  // Fraction of the datasheet HBM bandwidth the input cast's kernels stream at, per kernel; 0:
  // memory_op_efficiency. Fitted apart from the GEMM because the casts are slow: on H100 an fp8
  // GEMM of 32768 x 32 x 8192 (AIConfigurator, TensorRT-LLM) takes 1065 us where its bf16 twin
  // takes 192 us, the per-tensor cast streaming its ~5 bytes per element at ~1.4 TB/s (42%).
  std::array<double, kCastKernels> cast_efficiency{0, 0, 0, 0};
  double cast_efficiency_for(int kernel) const {
    const double e = cast_efficiency[static_cast<std::size_t>(kernel)];
    return e > 0 ? e : memory_op_efficiency;
  }
  // Fixed cost of the copy a block-scaled fp8 GEMM op makes of its activation scales when they
  // are not laid out as its kernel reads them. DeepGEMM loads the 1 x 128 scales MN-major
  // through TMA, each column starting 16-byte aligned: with more than one scale per row
  // (k > 128) and rows not a multiple of 4, the framework first copies them into a padded
  // tensor (get_col_major_tma_aligned_tensor). GB200's table (TensorRT-LLM 1.3) shows it:
  // 4 x n x k 7.4 us, 5 x n x k 13.5 us (median over n at k = 512: +6 to +10 us from k = 256
  // up, nothing at k = 128). 0: the quantize kernel writes the aligned layout itself, as the
  // H100, H200 and B200 tables show (TensorRT-LLM 1.2 / 1.3: under 0.2 us at 4 -> 5 rows).
  double scale_align_overhead_s = 0;
  // Fixed cost of a weight-only GEMM beyond launch_overhead (TensorRT-LLM's weight-only
  // kernels: their smallest calls take ~8 us on A100 where a bf16 GEMM takes 2.5 us).
  double weight_only_overhead_s = 0;
  // Kernel-library behaviours measured on NVIDIA's kernel tables (AIConfigurator, issue 24), each
  // a switch (0 or 1). The family defaults leave them off: those defaults are the A100 Vidur fit
  // carried to Hopper and Blackwell, with which every published-run validation case was checked;
  // the per-GPU calibrations fitted on the measured tables (configs/calibration/*-aic.yaml) turn
  // them on. Making them the default waits for the collective refit (the same issue), since the
  // validation runs agree today partly because those errors cancel.
  //   smem_operand_mma: Hopper's wgmma reads its operands from shared memory through descriptors
  //     (PTX ISA 8.0), so the Ampere ldmatrix term does not bound the main loop (as on Blackwell).
  //   stream_k: cuBLAS's sm90/sm100 kernels may schedule Stream-K (even K shares per SM).
  //   narrow_output_16bit: 8- and 4-bit GEMMs write 16-bit results (TE, TensorRT-LLM).
  double smem_operand_mma = 0;
  double stream_k = 0;
  double narrow_output_16bit = 0;
  // Per wave of CTA tiles: pipeline prologue (first operand loads) and epilogue (C store).
  double tile_overhead_s = 1e-6;
  // HBM latency under load, as a multiple of GpuSpec::hbm_latency (idle, pointer chase). Little's
  // law: an SM streams (bytes its CTAs keep in flight) / (loaded latency); why a GEMM with few
  // or shallow tiles needs split-K or deeper pipelines to reach full bandwidth.
  double loaded_latency_factor = 3;
  // Power limit: a GPU at full matrix load draws more than its board power (A100 SXM: 400 W)
  // at boost clock, so after about `power_window_s` of compute-bound work its power controller
  // lowers the clocks, and on-chip rates (matrix units, shared memory, L2) fall to
  // `sustained_clock_fraction` of their burst value. HBM bandwidth does not scale with the SM
  // clock. Isolated kernels shorter than the window run at burst clocks; a training step keeps
  // the GPU busy back to back, so there every kernel runs sustained (`sustained_load`). The
  // GEMM and FlashAttention models apply it to their on-chip terms (power_limit()).
  double sustained_clock_fraction = 1;
  double power_window_s = 1e-3;
  bool sustained_load = false;
  struct PowerLimit {
    double window, inv_sustained;
    // On-chip time `t` at burst clocks, as it runs under the limit.
    double operator()(double t) const { return t > window ? window + (t - window) * inv_sustained : t; }
  };
  PowerLimit power_limit() const {
    return {sustained_load ? 0 : power_window_s, 1 / std::clamp(sustained_clock_fraction, 0.05, 1.0)};
  }
  // These parameters below the power limit throughout: a short benchmark replay's clocks.
  KernelParams at_burst_clocks() const {
    KernelParams burst = *this;
    burst.sustained_clock_fraction = 1;
    return burst;
  }
  // FlashAttention main loop: fraction of the matrix peak reached by the forward and the
  // backward kernels (softmax, rescaling and the recomputation share the SM with the MMAs).
  double attention_efficiency = 0.6;
  double attention_backward_efficiency = 0.45;
  // The forward's fraction for fp8 Q, K, V (FP8 FMHA, of the doubled fp8 peak; 0: attention_efficiency):
  // measured apart because its softmax and rescaling do not get faster with the MMAs.
  double attention_efficiency_fp8 = 0;
  double attention_efficiency_for(DType dtype) const {
    return dtype == DType::kFp8 && attention_efficiency_fp8 > 0 ? attention_efficiency_fp8 : attention_efficiency;
  }
  // The serving framework's attention op around its main kernel (TensorRT-LLM: QKV preprocessing
  // with RoPE, the KV-cache append, then FMHA or XQA): a fixed cost per call, prefill and decode
  // apart. 0 unless fitted: FlashAttention timed alone carries none. Decode with an 8-bit cache
  // runs another kernel with costs of its own (0: the 16-bit cache's). kernels-aic H100, one
  // sequence of 2 tokens: 8.5 us with a bf16 cache, 5.9 us with fp8.
  std::array<double, 3> attention_overhead_s{0, 0, 0};  // prefill, decode, decode with an 8-bit cache
  // The forward kernel's fixed work per CTA outside its tile loop (Q load, softmax finalisation,
  // O store, the pipeline's fill), packed on the SMs with the tiles; 0: a tile_overhead per wave
  // as for GEMMs. kernels-aic H100 bf16 head_dim 128: 128 sequences of 128 tokens, 32 heads
  // (4096 CTAs of 2 tiles) take 335 us, ~8 us per CTA where the tiles' MMAs take ~2 us.
  double attention_cta_overhead_s = 0;
  // One forward CTA's rate for its prologue and epilogue bytes (Q rows and first K/V tile in, O
  // rows out; 0: none).
  double attention_cta_bandwidth = 0;
  // Decode attention as one CTA per (sequence, KV head, KV split) of a grouped kernel (all query
  // heads of a GQA group in one CTA: TensorRT-LLM's XQA, FlashInfer, FlashDecoding), or per
  // (sequence, query head, split) of a per-head kernel (TensorRT-LLM's MMHA, which serves MHA
  // and groups above `decode_group_limit`; each head re-reads its group's K and V from L2).
  // A CTA costs its fixed work (Q load, block table, softmax finalisation, output) plus its keys'
  // bytes at `decode_cta_bandwidth` (what one CTA's loads in flight sustain, and with an 8-bit
  // cache its dequantisation on the CUDA cores: per cache dtype); the CTAs pack onto
  // the SMs, the longest one bounds the kernel, HBM bounds the whole. All 0 (the default): the
  // KV stream alone, its parallelism from Little's law (loaded_latency_factor).
  // kernels-aic H100 at 2 cached tokens, 1024 sequences: XQA 32 heads on 8 KV heads 298 us over
  // 8192 CTAs (~4.8 us of SM time each), fp8 cache ~2 us; MMHA 32 x 32 heads 354 us over 32768
  // (~1.4 us); 64 heads on 1 KV head (group 64) runs MMHA: 605 us, 1024 sequences x 64 heads.
  std::array<double, 2> decode_cta_overhead_s{0, 0};  // grouped kernel: 16-bit, 8-bit cache
  double decode_head_cta_overhead_s = 0;               // per-head kernel
  std::array<double, 2> decode_cta_bandwidth{0, 0};  // B/s per CTA: 16-bit, 8-bit cache
  double decode_group_limit = 0;                       // largest GQA group a grouped CTA serves (0: any)
  // Decode's values for a KV cache in `cache`: an 8-bit cache's own where set, else the 16-bit one's.
  static double for_cache(DType cache, double wide, double narrow) {
    return dtype_bytes(cache) < 2 && narrow > 0 ? narrow : wide;
  }
  double decode_overhead_for(DType cache) const { return for_cache(cache, attention_overhead_s[1], attention_overhead_s[2]); }
  double decode_cta_bandwidth_for(DType cache) const {
    return for_cache(cache, decode_cta_bandwidth[0], decode_cta_bandwidth[1]);
  }
  double decode_cta_overhead_for(DType cache) const {
    return for_cache(cache, decode_cta_overhead_s[0], decode_cta_overhead_s[1]);
  }
  // Fraction of the HBM bandwidth that decode attention streams the KV cache at (0: hbm_efficiency).
  double attention_decode_efficiency = 0;
  // Multi-head latent attention's kernels (mla_prefill, mla_decode in attention_model.hpp) where
  // they were measured apart from GQA's (kernels-aic's MLA tables); 0: the attention values above.
  // TensorRT-LLM runs other kernels for it (its MLA context FMHA of Q/K 192 and V 128; FlashMLA-
  // style decode over the shared latent) and other ops around them (MLA's RoPE and latent-cache
  // append): kernels-aic H100, 2 cached tokens, any batch up to 32: 13-15 us, where its GQA decode
  // op takes 8.5 us.
  double mla_prefill_efficiency = 0;           // the context FMHA's fraction of the matrix peak
  double mla_prefill_efficiency_fp8 = 0;       // the same in fp8 (mla_prefill_runs_fp8); 0: attention_efficiency_fp8
  double mla_decode_efficiency = 0;            // the latent stream's fraction of HBM bandwidth
  std::array<double, 2> mla_overhead_s{0, 0};  // the op's fixed cost: prefill, decode
  // The context FMHA's CTAs (0: attention_cta_overhead_s's, attention_cta_bandwidth's): its own
  // kernel, with 192-wide Q and K rows and 128-wide V and O rows.
  double mla_prefill_cta_overhead_s = 0;
  double mla_prefill_cta_bandwidth = 0;
  // MLA decode's CTAs: their rate through the cache (0: decode_cta_bandwidth's), and whether one
  // CTA walks each sequence's whole cache with no split-KV (1; 0: split as GQA's kernels do).
  // kernels-aic, one sequence, any heads from 1 to 64: A100 125 us per 1024 cached tokens
  // (~9 GB/s for the CTA), L40S 84 us; H100 splits (14-24 us up to 8192 tokens).
  double mla_decode_cta_bandwidth = 0;
  double mla_decode_single_cta = 0;
  // Memory-bound kernels (norms, activations, adds): fraction of the HBM bandwidth they reach,
  // and their launch cost (usually below a GEMM's: no prologue). Implementations differ by op
  // (a fused vectorised add streams at ~90% of HBM, a row-wise norm with a block reduction at
  // ~35%), so each op may carry its own measured fraction; 0 there means memory_op_efficiency.
  double memory_op_efficiency = 0.75;
  std::array<double, kMemoryOpCount> memory_op_efficiency_by_op{};
  double memory_op_overhead_s = 3e-6;
  std::array<double, kMemoryOpCount> memory_op_overhead_by_op{};

  // The token-permute kernels of mixture-of-experts layers (gather rows by an index, the top-k
  // weighted sum back into token order): fraction of the HBM bandwidth they reach; 0:
  // memory_op_efficiency. Fitted on measured MoE layers (aic-moe), where they come out slower
  // than streaming kernels (permute + finalize 1.3-2x their streaming cost on every GPU's table).
  double gather_efficiency = 0;
  double gather_efficiency_or_default() const { return gather_efficiency > 0 ? gather_efficiency : memory_op_efficiency; }
  // The grouped GEMMs of a fused MoE op (TensorRT-LLM's CUTLASS MoE GEMMs; grouped_gemm_time) are
  // kernels of their own, not the dense GEMM library's: their fraction of the format's matrix peak,
  // by the format their main loop runs (kMoeGemm* below); 0: the dense GEMM's matrix efficiency.
  // kernels-aic H100, 256 experts of 7168 x 2048 on one GPU, 16384 tokens top 8 (512 rows an
  // expert, compute-bound): the fp8 block-scaled op 28.1 ms, ~410 TFLOP/s, 21% of the fp8 peak,
  // where dense block-scaled GEMMs reach 56%. Fitted (aic-moe rows, H100): bf16 0.82 (dense 0.75),
  // fp8 0.72 (0.68), fp8_block 0.29 (0.56).
  // With few rows an expert the same kernels stream their weights at their own fraction of the
  // HBM bandwidth (0: hbm_efficiency): kernels-aic B200, nvfp4, DeepSeek-V3's layer over 8 GPUs
  // at 16 tokens (16 experts' 396 MB of weights and scales): 185 us, 2.1 TB/s.
  static constexpr int kMoeGemmBf16 = 0, kMoeGemmFp8 = 1, kMoeGemmFp8Block = 2, kMoeGemmFp4 = 3;
  static constexpr std::array<std::string_view, 4> kMoeGemmSlotNames = {"bf16", "fp8", "fp8_block", "nvfp4"};
  std::array<double, 4> moe_gemm_efficiency{0, 0, 0, 0};
  std::array<double, 4> moe_gemm_hbm_efficiency{0, 0, 0, 0};
  // And a fixed cost per MoE op by the same format: the kernels the format adds around the
  // grouped GEMMs (activation quantization, scale-factor layout), whatever the tokens. kernels-aic
  // B200, DeepSeek-V3's layer at TP 8, 1 token (8 experts' 27 MB of nvfp4 weights, 4 us at HBM
  // peak): nvfp4 67 us, DeepGEMM fp8_block 106 us.
  std::array<double, 4> moe_op_overhead_s{0, 0, 0, 0};
  static int moe_gemm_slot(DType dtype, GemmRecipe recipe) {
    if (recipe == GemmRecipe::kBlockScaled) return dtype == DType::kFp4 ? kMoeGemmFp4 : kMoeGemmFp8Block;
    if (recipe == GemmRecipe::kWeightOnly || dtype_bytes(dtype) >= 2) return kMoeGemmBf16;  // 16-bit main loop
    return dtype == DType::kFp4 ? kMoeGemmFp4 : kMoeGemmFp8;
  }
  double moe_gemm_efficiency_for(DType dtype, GemmRecipe recipe) const {
    const double v = moe_gemm_efficiency[static_cast<std::size_t>(moe_gemm_slot(dtype, recipe))];
    return v > 0 ? v : matrix_efficiency_for(dtype, recipe);
  }
  double moe_gemm_hbm_efficiency_for(DType dtype, GemmRecipe recipe) const {
    const double v = moe_gemm_hbm_efficiency[static_cast<std::size_t>(moe_gemm_slot(dtype, recipe))];
    return v > 0 ? v : hbm_efficiency;
  }

  double memory_efficiency(MemoryOp op) const {
    const double v = memory_op_efficiency_by_op[static_cast<std::size_t>(op)];
    return v > 0 ? v : memory_op_efficiency;
  }
  double memory_overhead(MemoryOp op) const {
    const double v = memory_op_overhead_by_op[static_cast<std::size_t>(op)];
    return v > 0 ? v : memory_op_overhead_s;
  }
  // When the device is a host CPU (GpuSpec::host_cpu): the CPU models' parameters from the
  // scenario's calibration file (its cpu: section); empty: the CPU spec's defaults.
  std::shared_ptr<const CpuParams> cpu;
  std::string source;  // where the values came from ("family default: ...", a calibration file)

  // Family defaults, chosen by the GPU's architecture: fitted to the measured kernels of one
  // GPU of the family where there are some (ampere: A100), scaled by MAMF for the others.
  static KernelParams defaults_for(const hw::GpuSpec& gpu);
  // What exasim knows without any measured kernel table: datasheet plus published
  // microbenchmarks (MAMF, HBM and L2 bandwidth, FlashAttention-2); the "uncalibrated" baseline
  // of `exasim calibrate`.
  static KernelParams microbenchmark_defaults(const hw::GpuSpec& gpu);
};

// Name/value view for calibration and reports: "matrix_efficiency", "hbm_efficiency", ...
// kind: fraction in (0, 1], a time in s, a byte count, or a factor >= 1.
// kSwitch: 0 or 1 (false / true); kCount: a whole number >= 0 (set from what a library does, not fitted).
enum class ParamKind { kFraction, kTime, kBytes, kFactor, kSwitch, kBandwidth, kCount };
struct NamedParam {
  std::string name;
  double* value;
  std::string unit;
  ParamKind kind = ParamKind::kFraction;
};
std::vector<NamedParam> named_params(KernelParams& p);

}  // namespace exasim::models
