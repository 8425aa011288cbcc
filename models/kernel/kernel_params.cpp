#include "models/kernel/kernel_params.hpp"

#include <algorithm>

#include "models/kernel/attention_model.hpp"

namespace exasim::models {

namespace {

// Shared by every family: figures measured on A100 by microbenchmarks (not fitted to kernel
// tables), stated so that an uncalibrated prediction is a real prediction.
KernelParams common_defaults() {
  KernelParams p;
  // gpu_specs.yaml (ChipBenchmarker, A100 80GB): HBM read 1598.5 of 2039 GB/s; L2 3094 GB/s of
  // the whitepaper's 5120 B/clk x 1410 MHz = 7220 GB/s.
  p.hbm_efficiency = 0.78;
  p.memory_op_efficiency = 0.78;
  p.l2_efficiency = 0.43;
  // Launch: an empty kernel timed with CUDA events back to back costs ~3-5 us end to end on
  // Ampere/Hopper with PyTorch (estimate: the 2-7 us floor of the Vidur tables' smallest ops).
  p.launch_overhead_s = 4e-6;
  p.memory_op_overhead_s = 3e-6;
  // Prologue and epilogue of a wave: about two loaded HBM round trips plus the C store.
  p.tile_overhead_s = 1e-6;
  p.loaded_latency_factor = 3;  // loaded vs idle latency, estimate (queueing in HBM controllers)
  p.vector_efficiency = 0.6;    // estimate: elementwise FP32 code reaches ~60% of FMA peak
  // FlashAttention-2 (Dao, 2023), A100, head dim 128: forward up to 73% of peak, backward ~63%.
  p.attention_efficiency = 0.73;
  p.attention_backward_efficiency = 0.63;
  return p;
}

// Maximum achievable matmul over the dense bf16 peak (ml-engineering "MAMF", gpu_specs.yaml):
// the rate a large tile's main loop sustains, per family; the fallback for GPUs whose catalog
// entry has no measured_matmul of their own.
double family_mamf(const std::string& arch) {
  if (arch == "ampere") return 271.2 / 312;               // A100: 271.2 of 312 TFLOP/s (0.869)
  if (arch == "hopper") return 0.803;                     // H100: 794.5 of 989 TFLOP/s
  if (arch == "blackwell") return 0.776;                  // B200: 1745 of 2250 TFLOP/s
  if (arch == "cdna3" || arch == "cdna2") return 0.511;   // MI300X: 668.4 of 1307.4 TFLOP/s
  // Volta (V100) and families without a measurement: an estimate, not a measurement (large
  // cuBLAS fp16 GEMMs on V100 are commonly reported at 95-105 of 125 TFLOP/s).
  return 0.8;
}

// The GPU's own MAMF over its dense bf16 peak where its catalog entry states one (the same
// family's GPUs differ: GB200 reaches 0.729 of its 2500 TFLOP/s, B200 0.776 of 2250), else the
// family's.
double mamf(const hw::GpuSpec& gpu) {
  const double measured = gpu.measured_matmul(DType::kBf16), peak = gpu.peak(DType::kBf16);
  return measured > 0 && peak > 0 ? measured / peak : family_mamf(gpu.architecture);
}

// The forward's MMA efficiency that gives `rate`, a fraction of the dense bf16 peak, at head_dim
// 128 once the softmax's exponentials are added (softmax_time_per_pair; 0: `rate` itself).
double forward_mma_efficiency(const hw::GpuSpec& gpu, double rate) {
  const double per_sm = gpu.matrix_flops_per_sm(DType::kBf16), softmax = softmax_time_per_pair(gpu);
  if (per_sm <= 0 || softmax <= 0) return rate;
  const double pair = 4 * 128 / (per_sm * rate);  // one SM's time per (query, key) pair at `rate`
  return pair > softmax ? std::min(1.0, 4 * 128 / (per_sm * (pair - softmax))) : 1.0;
}

// FlashAttention's main loop, forward and backward, as a fraction of the dense 16-bit peak, per
// family. Ampere: FlashAttention-2 (Dao, 2023), A100, head dim 128: forward up to 73%, backward
// ~63%. Hopper: those fractions are out of reach of FlashAttention-2 there (~35%); FlashAttention-3
// (Shah et al., 2024, arXiv:2407.08608, H100 SXM5, bf16, head dim 128, causal, 8k-16k tokens)
// reaches ~640-660 TFLOP/s forward (0.65 of 989) and about half the peak backward, cuDNN's fused
// attention about the same (approximate, read off the paper's figures). Blackwell: B200's best
// bf16 prefill at head_dim 128 in kernels-aic (TensorRT-LLM), 1109 of 2250 TFLOP/s (0.493); its
// backward A100's fraction (nothing measured). The forward's rates are end to end: on Hopper
// and Blackwell their MMA share follows from the softmax's (0.93, 0.92 of the peak).
void set_attention_efficiency(KernelParams& p, const hw::GpuSpec& gpu) {
  if (gpu.architecture == "hopper") {
    p.attention_efficiency = forward_mma_efficiency(gpu, 0.65);
    p.attention_backward_efficiency = 0.50;
  } else if (gpu.architecture == "blackwell") {
    p.attention_efficiency = forward_mma_efficiency(gpu, 0.493);
  }
}

// fp8 MAMF over bf16 MAMF, each as a fraction of its dense peak (gpu_specs.yaml, ml-engineering):
// the GPU's own measurements where its catalog entry has both, else the family's (H100 0.709 /
// 0.803, B200 0.763 / 0.776). 1 where the family has no fp8 matrix path or no measurement.
double mamf_fp8_ratio(const hw::GpuSpec& gpu) {
  const double fp8 = gpu.measured_matmul(DType::kFp8), fp8_peak = gpu.peak(DType::kFp8);
  if (fp8 > 0 && fp8_peak > 0) return (fp8 / fp8_peak) / mamf(gpu);
  if (gpu.architecture == "hopper") return 0.709 / 0.803;
  if (gpu.architecture == "blackwell") return 0.763 / 0.776;
  return 1;
}

}  // namespace

KernelParams KernelParams::microbenchmark_defaults(const hw::GpuSpec& gpu) {
  KernelParams p = common_defaults();
  set_attention_efficiency(p, gpu);
  p.matrix_efficiency = mamf(gpu);
  p.matrix_efficiency_fp8 = p.matrix_efficiency * mamf_fp8_ratio(gpu);
  p.source = "microbenchmark defaults (" + gpu.architecture + "): MAMF " + std::to_string(p.matrix_efficiency).substr(0, 5) +
             ", A100 HBM 0.78 and L2 0.43, FlashAttention " + std::to_string(p.attention_efficiency).substr(0, 4) +
             "/" + std::to_string(p.attention_backward_efficiency).substr(0, 4);
  return p;
}

KernelParams KernelParams::defaults_for(const hw::GpuSpec& gpu) {
  // The A100 fit to the Vidur op tables (configs/calibration/a100-sxm4-80gb.yaml, 12,528 GEMMs
  // and 15,660 memory-bound kernels of Llama-2-7B, Qwen-72B and CodeLlama-34B at 1..4k tokens
  // and TP 1..8; held-out models: 5.6% mean absolute error per GEMM, 3.4% per layer). Other
  // families scale the matrix efficiency by their MAMF relative to A100's; the memory hierarchy
  // and overhead figures are carried over as measured on A100.
  KernelParams p = common_defaults();
  set_attention_efficiency(p, gpu);
  p.matrix_efficiency = 0.8308 * mamf(gpu) / family_mamf("ampere");
  p.matrix_efficiency_fp8 = p.matrix_efficiency * mamf_fp8_ratio(gpu);
  p.hbm_efficiency = 0.7556;
  p.l2_efficiency = 0.7672;
  p.launch_overhead_s = 1.57e-6;
  p.tile_overhead_s = 3.363e-6;
  p.loaded_latency_factor = 2.059;
  // Power limit (A100 fit): after ~0.2 ms of full tensor-core load the clocks settle at 93%
  // of the burst rate; training steps run there throughout (KernelParams::sustained_load).
  p.sustained_clock_fraction = 0.9278;
  p.power_window_s = 195.1e-6;
  auto op = [&p](MemoryOp o, double efficiency, double overhead_s) {
    p.memory_op_efficiency_by_op[static_cast<std::size_t>(o)] = efficiency;
    p.memory_op_overhead_by_op[static_cast<std::size_t>(o)] = overhead_s;
  };
  op(MemoryOp::kResidualAdd, 0.9664, 1.143e-6);
  op(MemoryOp::kSiluMul, 0.4957, 2.145e-6);
  op(MemoryOp::kRmsNorm, 0.3739, 2.428e-6);
  op(MemoryOp::kRope, 0.4747, 2.201e-6);
  p.source = gpu.architecture == "ampere"
                 ? "family default (ampere): A100 fit to Vidur op tables (configs/calibration/a100-sxm4-80gb.yaml)"
                 : "family default (" + gpu.architecture + "): A100 fit, matrix efficiency scaled by " +
                       (gpu.measured_matmul(DType::kBf16) > 0 ? "this GPU's measured MAMF" : "the family's MAMF");
  return p;
}

std::vector<NamedParam> named_params(KernelParams& p) {
  std::vector<NamedParam> out = {
      {"matrix_efficiency", &p.matrix_efficiency, "fraction", ParamKind::kFraction},
      {"matrix_efficiency_fp8", &p.matrix_efficiency_fp8, "fraction", ParamKind::kFraction},
      {"matrix_efficiency_fp4", &p.matrix_efficiency_fp4, "fraction", ParamKind::kFraction},
      {"matrix_efficiency_int8", &p.matrix_efficiency_int8, "fraction", ParamKind::kFraction},
      {"matrix_efficiency_block_fp8", &p.matrix_efficiency_block_fp8, "fraction", ParamKind::kFraction},
      {"matrix_efficiency_weight_only", &p.matrix_efficiency_weight_only, "fraction", ParamKind::kFraction},
      {"vector_efficiency", &p.vector_efficiency, "fraction", ParamKind::kFraction},
      {"hbm_efficiency", &p.hbm_efficiency, "fraction", ParamKind::kFraction},
      {"l2_efficiency", &p.l2_efficiency, "fraction", ParamKind::kFraction},
      {"launch_overhead", &p.launch_overhead_s, "s", ParamKind::kTime},
      {"host_launch_overhead", &p.host_launch_overhead_s, "s", ParamKind::kTime},
      {"smem_operand_mma", &p.smem_operand_mma, "switch", ParamKind::kSwitch},
      {"stream_k", &p.stream_k, "switch", ParamKind::kSwitch},
      {"narrow_output_16bit", &p.narrow_output_16bit, "switch", ParamKind::kSwitch},
      {"weight_only_overhead", &p.weight_only_overhead_s, "s", ParamKind::kTime},
      {"tile_overhead", &p.tile_overhead_s, "s", ParamKind::kTime},
      {"loaded_latency_factor", &p.loaded_latency_factor, "x", ParamKind::kFactor},
      {"sustained_clock_fraction", &p.sustained_clock_fraction, "fraction", ParamKind::kFraction},
      {"power_window", &p.power_window_s, "s", ParamKind::kTime},
      {"attention_efficiency", &p.attention_efficiency, "fraction", ParamKind::kFraction},
      {"attention_backward_efficiency", &p.attention_backward_efficiency, "fraction", ParamKind::kFraction},
      {"attention_efficiency_fp8", &p.attention_efficiency_fp8, "fraction", ParamKind::kFraction},
      {"attention_overhead.prefill", &p.attention_overhead_s[0], "s", ParamKind::kTime},
      {"attention_overhead.decode", &p.attention_overhead_s[1], "s", ParamKind::kTime},
      {"attention_overhead.decode_fp8", &p.attention_overhead_s[2], "s", ParamKind::kTime},
      {"attention_cta_overhead", &p.attention_cta_overhead_s, "s", ParamKind::kTime},
      {"attention_cta_bandwidth", &p.attention_cta_bandwidth, "B/s", ParamKind::kBandwidth},
      {"decode_cta_overhead.bf16", &p.decode_cta_overhead_s[0], "s", ParamKind::kTime},
      {"decode_cta_overhead.fp8", &p.decode_cta_overhead_s[1], "s", ParamKind::kTime},
      {"decode_head_cta_overhead", &p.decode_head_cta_overhead_s, "s", ParamKind::kTime},
      {"decode_cta_bandwidth.bf16", &p.decode_cta_bandwidth[0], "B/s", ParamKind::kBandwidth},
      {"decode_cta_bandwidth.fp8", &p.decode_cta_bandwidth[1], "B/s", ParamKind::kBandwidth},
      {"decode_group_limit", &p.decode_group_limit, "", ParamKind::kCount},
      {"attention_decode_efficiency", &p.attention_decode_efficiency, "fraction", ParamKind::kFraction},
      {"mla_prefill_efficiency", &p.mla_prefill_efficiency, "fraction", ParamKind::kFraction},
      {"mla_prefill_efficiency_fp8", &p.mla_prefill_efficiency_fp8, "fraction", ParamKind::kFraction},
      {"mla_decode_efficiency", &p.mla_decode_efficiency, "fraction", ParamKind::kFraction},
      {"mla_overhead.prefill", &p.mla_overhead_s[0], "s", ParamKind::kTime},
      {"mla_overhead.decode", &p.mla_overhead_s[1], "s", ParamKind::kTime},
      {"mla_prefill_cta_overhead", &p.mla_prefill_cta_overhead_s, "s", ParamKind::kTime},
      {"mla_prefill_cta_bandwidth", &p.mla_prefill_cta_bandwidth, "B/s", ParamKind::kBandwidth},
      {"mla_decode_cta_bandwidth", &p.mla_decode_cta_bandwidth, "B/s", ParamKind::kBandwidth},
      {"mla_decode_single_cta", &p.mla_decode_single_cta, "switch", ParamKind::kSwitch},
      {"memory_op_efficiency", &p.memory_op_efficiency, "fraction", ParamKind::kFraction},
      {"memory_op_overhead", &p.memory_op_overhead_s, "s", ParamKind::kTime},
      {"gather_efficiency", &p.gather_efficiency, "fraction", ParamKind::kFraction}};
  for (std::size_t i = 0; i < p.moe_gemm_efficiency.size(); ++i) {
    const std::string slot(KernelParams::kMoeGemmSlotNames[i]);
    out.push_back({"moe_gemm_efficiency." + slot, &p.moe_gemm_efficiency[i], "fraction", ParamKind::kFraction});
    out.push_back({"moe_gemm_hbm_efficiency." + slot, &p.moe_gemm_hbm_efficiency[i], "fraction", ParamKind::kFraction});
    out.push_back({"moe_op_overhead." + slot, &p.moe_op_overhead_s[i], "s", ParamKind::kTime});
  }
  for (int i = 0; i < kCastKernels; ++i)
    out.push_back({"cast_overhead." + std::string(cast_kernel_name(i)), &p.cast_overhead_s[static_cast<std::size_t>(i)], "s",
                   ParamKind::kTime});
  out.push_back({"scale_align_overhead", &p.scale_align_overhead_s, "s", ParamKind::kTime});
  for (int i = 0; i < kCastKernels; ++i)
    out.push_back({"cast_efficiency." + std::string(cast_kernel_name(i)), &p.cast_efficiency[static_cast<std::size_t>(i)],
                   "fraction", ParamKind::kFraction});
  for (std::size_t i = 0; i < kMemoryOpCount; ++i) {
    const auto op = static_cast<MemoryOp>(i);
    out.push_back({"memory_op_efficiency." + std::string(memory_op_name(op)), &p.memory_op_efficiency_by_op[i],
                   "fraction", ParamKind::kFraction});
    out.push_back({"memory_op_overhead." + std::string(memory_op_name(op)), &p.memory_op_overhead_by_op[i], "s",
                   ParamKind::kTime});
  }
  return out;
}

}  // namespace exasim::models
