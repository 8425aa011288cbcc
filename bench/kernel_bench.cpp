// Kernel-model throughput: predictions per second of the planner-facing API (gemm_time over a
// mix of decode, prefill and training shapes; attention; memory ops; the MoE layer), and the in-process cost of
// what `exasim kernel` does (catalog load + one prediction). Prints rates; always exits 0.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "models/calibration/calibration_file.hpp"
#include "models/calibration/default_calibration.hpp"
#include "models/kernel/kernel_models.hpp"
#include "models/kernel/moe_experts_model.hpp"

using namespace exasim;
using namespace exasim::models;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Shape {
  double m, n, k;
};

// Llama-style linear layers at decode, chunked-prefill and training token counts, TP 1..8.
std::vector<Shape> gemm_mix() {
  std::vector<Shape> out;
  for (double m : {1.0, 8.0, 32.0, 256.0, 1000.0, 2048.0, 8192.0})
    for (double n : {1536.0, 4096.0, 6144.0, 14336.0, 28672.0})
      for (double k : {1024.0, 4096.0, 8192.0, 14336.0}) out.push_back({m, n, k});
  return out;
}

template <class F>
void rate(const char* name, int calls, F&& f) {
  double sink = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) sink += f(i);
  const double s = seconds_since(t0);
  std::printf("%-34s %10.3f M predictions/s  (%d calls, %.3f s, checksum %.6g)\n", name, calls / s / 1e6, calls, s, sink);
}

}  // namespace

int main() {
  const auto t_load = Clock::now();
  const hw::Catalog catalog = hw::Catalog::load(hw::default_configs_dir());
  const hw::GpuSpec gpu = catalog.gpu("A100-SXM4-80GB");
  const KernelParams p = KernelParams::defaults_for(gpu);
  const double first = gemm_time(gpu, p, DType::kBf16, 4096, 4096, 4096).time_s;
  std::printf("catalog load + first prediction (what `exasim kernel` does): %.2f ms (predicted %.3g s)\n",
              seconds_since(t_load) * 1e3, first);

  const std::vector<Shape> mix = gemm_mix();
  const auto count = static_cast<int>(mix.size());
  rate("gemm_time (decode..training mix)", 2'000'000, [&](int i) {
    const Shape& s = mix[static_cast<std::size_t>(i % count)];
    return gemm_time(gpu, p, DType::kBf16, s.m, s.n, s.k).time_s;
  });
  rate("gemm_time (decode, m = 1..64)", 2'000'000, [&](int i) {
    return gemm_time(gpu, p, DType::kBf16, 1 + i % 64, 4096, 4096).time_s;
  });
  rate("gemm_time (training, m = 8192)", 2'000'000, [&](int i) {
    return gemm_time(gpu, p, DType::kBf16, 8192, 4096 + (i % 8) * 1024, 8192).time_s;
  });
  rate("attention_prefill (seq 512..8192)", 500'000, [&](int i) {
    return attention_prefill(gpu, p, DType::kBf16, {1, 512.0 * (1 + i % 16), 0, 32, 8, 128, true}).time_s;
  });
  rate("attention_decode (batch 1..64)", 2'000'000, [&](int i) {
    return attention_decode(gpu, p, DType::kBf16, {1.0 + i % 64, 4096, 32, 8, 128, 16}).time_s;
  });
  rate("memory_op (rmsnorm)", 5'000'000, [&](int i) {
    return memory_op(gpu, p, MemoryOp::kRmsNorm, DType::kBf16, 1 + i % 4096, 4096).time_s;
  });
  // A serving step's MoE layer (Mixtral 8x7B, TP 1): uniform routing in closed form, then the
  // fused op's six kernels.
  const GemmFormat bf16{"bfloat16", DType::kBf16, GemmRecipe::kDense, InputCast::kNone};
  rate("moe_experts_time (tokens 1..4096)", 500'000, [&](int i) {
    MoeExpertsShape s;
    s.tokens = 1 + i % 4096, s.hidden = 4096, s.expert_ffn = 14336, s.top_k = 2, s.experts = 8;
    s.load = busiest_rank_experts({ExpertRoutingKind::kUniform, 0}, s.tokens, 2, 8, 1);
    return moe_experts_time(gpu, p, bf16, s).total.time_s;
  });
  // What exasim kernel runs by default on a measured GPU: its fitted file, with the libraries'
  // behaviours (Stream-K, two-CTA operand sharing, narrow 16-bit outputs) on.
  const hw::GpuSpec h100 = catalog.gpu("H100-SXM5-80GB");
  const std::string file =
      default_calibration(catalog.configs_dir(), CalibrationFor::kGpu, h100.name);
  Calibration measured;
  measured.kernel = KernelParams::defaults_for(h100);
  if (!file.empty()) measured = load_calibration(measured, file);
  rate("gemm_time (mix, H100 measured file)", 2'000'000, [&](int i) {
    const Shape& s = mix[static_cast<std::size_t>(i % count)];
    return gemm_time(h100, measured.kernel, DType::kBf16, s.m, s.n, s.k).time_s;
  });
  return 0;
}
