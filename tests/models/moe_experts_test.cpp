// MoE routed experts (moe_experts_model.hpp, expert_routing.hpp) and NVIDIA AIConfigurator's MoE
// tables (aic_moe_table.hpp): the routing's load against a direct enumeration of the benchmark's
// own assignment rule and closed forms, the op's kernels by hand, the H100 table's measured rows
// predicted from its calibration file, the MoE parameters' fit recovering known values, and
// malformed tables refused with file, line and column.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include "hw/error.hpp"
#include "kernel_test_gpus.hpp"
#include "located_error.hpp"
#include "models/calibration/aic_moe_table.hpp"
#include "models/calibration/calibration_file.hpp"
#include "models/calibration/kernel_calibration.hpp"
#include "models/kernel/kernel_models.hpp"
#include "models/kernel/moe_experts_model.hpp"

using namespace exasim;
using namespace exasim::models;
using exasim::testing::approx;
using exasim::testing::catalog_gpu;

namespace {

const std::string kData = std::string(EXASIM_TEST_DATA) + "/kernels-aic";

// AIConfigurator's balanced_logits as written (token i's j-th expert), counted on experts [0, E/ep).
ExpertLoad enumerate_balanced(long T, int k, int E, int ep) {
  const long s = (E + k - 1) / k;
  std::vector<long> count(static_cast<std::size_t>(E), 0);
  for (long i = 0; i < T; ++i)
    for (int j = 0; j < k; ++j) {
      const long e = T >= s ? (i + j * s) % E : static_cast<long>(static_cast<double>(i) * static_cast<double>(s) / static_cast<double>(T) + static_cast<double>(j * s)) % E;
      ++count[static_cast<std::size_t>(e)];
    }
  ExpertLoad l;
  for (int e = 0; e < E / ep; ++e) {
    l.routed_tokens += static_cast<double>(count[static_cast<std::size_t>(e)]);
    if (count[static_cast<std::size_t>(e)] > 0) l.active_experts += 1;
  }
  return l;
}

}  // namespace

TEST_CASE("expert routing: balanced as the benchmark assigns, uniform in closed form, power law on the busiest rank") {
  const ExpertRouting balanced{ExpertRoutingKind::kBalanced, 0};
  for (const auto& [T, k, E, ep] : std::vector<std::tuple<long, int, int, int>>{
           {1, 8, 256, 1}, {3, 8, 256, 1}, {4, 2, 8, 2}, {64, 8, 256, 8}, {1000, 10, 512, 16}, {777, 6, 160, 32}, {5, 2, 8, 8}}) {
    CAPTURE(T);
    CAPTURE(k);
    CAPTURE(E);
    CAPTURE(ep);
    const ExpertLoad want = enumerate_balanced(T, k, E, ep), got = busiest_rank_experts(balanced, static_cast<double>(T), k, E, ep);
    CHECK(got.active_experts == want.active_experts);
    CHECK(got.routed_tokens == want.routed_tokens);
  }
  // One token, top 8 of 256: eight experts, one copy each; 64 tokens cover every expert twice.
  CHECK(busiest_rank_experts(balanced, 1, 8, 256, 1).active_experts == 8);
  CHECK(busiest_rank_experts(balanced, 64, 8, 256, 8).routed_tokens == 64);
  CHECK(busiest_rank_experts(balanced, 64, 8, 256, 8).active_experts == 32);

  // Uniform: a given expert is missed by one token with probability 1 - k/E.
  const ExpertRouting uniform{ExpertRoutingKind::kUniform, 0};
  const ExpertLoad u = busiest_rank_experts(uniform, 10, 2, 8, 2);
  CHECK(u.routed_tokens == approx(10.0));
  CHECK(u.active_experts == approx(4 * (1 - std::pow(0.75, 10))));

  // Power law: every copy on one rank when ep = 1; the busiest of 8 ranks above the mean share and
  // at most all copies; the same load on every call (seeded draws).
  const ExpertRouting skew = *parse_expert_routing("power_law_1.2");
  CHECK(skew.alpha == 1.2);
  CHECK(busiest_rank_experts(skew, 4096, 8, 256, 1).routed_tokens == 4096 * 8);
  const ExpertLoad busiest = busiest_rank_experts(skew, 4096, 8, 256, 8);
  CHECK(busiest.routed_tokens > 4096.0 * 8 / 8 * 1.2);
  CHECK(busiest.routed_tokens < 4096.0 * 8);
  CHECK(busiest.active_experts <= 32);
  const ExpertLoad again = busiest_rank_experts(skew, 4096, 8, 256, 8);
  CHECK(again.routed_tokens == busiest.routed_tokens);
  CHECK(again.active_experts == busiest.active_experts);
  CHECK(expert_routing_name(skew) == "power_law_1.2");
  CHECK_FALSE(parse_expert_routing("power_law_0"));
  CHECK_FALSE(parse_expert_routing("power_law_x"));
  CHECK_FALSE(parse_expert_routing("power_law_10.5"));  // above kMaxPowerLawAlpha
  CHECK_FALSE(parse_expert_routing("power_law_inf"));
  // At the accepted bounds the draw stays finite: with every expert on one rank, the rank holds
  // all T x top_k copies, exactly (the rounding correction closes each draw on the target).
  const ExpertRouting steepest = *parse_expert_routing("power_law_10");
  const double most_tokens = 2147483647.0;
  const ExpertLoad all = busiest_rank_experts(steepest, most_tokens, 8, kMaxExperts, 1);
  CHECK(all.routed_tokens == most_tokens * 8);
  CHECK(all.active_experts >= 1);
  CHECK(all.active_experts <= kMaxExperts);
  CHECK_FALSE(parse_expert_routing("zipf"));
}

TEST_CASE("MoE experts: the op's kernels by hand") {
  const hw::GpuSpec g = catalog_gpu("H100-SXM5-80GB");
  const KernelParams p = KernelParams::defaults_for(g);
  MoeExpertsShape s;
  s.tokens = 512, s.hidden = 4096, s.expert_ffn = 1024, s.top_k = 2, s.experts = 8, s.gated = true;
  s.load = {4, 512};  // 4 local experts, 128 copies each
  const GemmFormat bf16{"bfloat16", DType::kBf16, GemmRecipe::kDense, InputCast::kNone};
  const MoeExpertsCost c = moe_experts_time(g, p, bf16, s);
  CHECK(c.up.time_s == gemm_time(g, p, DType::kBf16, 128, 2048, 4096, 4).time_s);
  CHECK(c.down.time_s == gemm_time(g, p, DType::kBf16, 128, 4096, 1024, 4).time_s);
  CHECK(c.act.time_s == memory_op(g, p, MemoryOp::kSiluMul, DType::kBf16, 512, 1024).time_s);
  // The gather reads 512 16-bit rows and writes them in bf16; the finalize reads the 512 copies
  // and writes the 512 tokens, with their 2 int32 picks.
  CHECK(c.finalize.bytes == approx((512.0 + 512) * 4096 * 2 + 512 * 2 * 4));
  CHECK(c.permute.bytes == approx(512.0 * 4096 * 4 + 3 * 2 * 512 * 2 * 4));
  CHECK(c.total.time_s == approx(c.route.time_s + c.permute.time_s + c.up.time_s + c.act.time_s + c.down.time_s +
                                 c.finalize.time_s));
  CHECK(c.total.flops >= 2 * 512.0 * 4096 * 1024 * 3);
  // Plain activation: the up projection is half as wide; fp8 operands halve the gathered bytes.
  s.gated = false;
  CHECK(moe_experts_time(g, p, bf16, s).up.time_s == gemm_time(g, p, DType::kBf16, 128, 1024, 4096, 4).time_s);
  const GemmFormat fp8{"fp8", DType::kFp8, GemmRecipe::kDense, InputCast::kPerTensor};
  CHECK(moe_experts_time(g, p, fp8, s).permute.bytes == approx(512.0 * 4096 * 3 + 3 * 2 * 512 * 2 * 4));
  // No copies on the rank: only the routing, the index kernels and the finalize's zero rows run.
  s.load = {0, 0};
  const MoeExpertsCost idle = moe_experts_time(g, p, bf16, s);
  CHECK(idle.up.time_s == 0);
  CHECK(idle.down.time_s == 0);
}

TEST_CASE("AIConfigurator MoE tables: rows, formats left out, and the H100 rows predicted from the GEMM file") {
  const std::string path = kData + "/h100_sxm/moe_perf.csv";
  REQUIRE(is_aic_moe_table(path));
  CHECK_FALSE(is_aic_moe_table(kData + "/h100_sxm/gemm_perf.csv"));
  const AicMoeTable t = read_aic_moe_table(path);
  REQUIRE(t.samples.size() == 7);
  REQUIRE(t.left_out.size() == 1);
  CHECK(t.left_out.at("w4a16_mxfp4 (no GEMM recipe for that format)") == 1);
  const KernelSample& first = t.samples[0];
  CHECK(first.kind == SampleKind::kMoeExperts);
  CHECK(first.op == "moe bfloat16 balanced");
  CHECK(first.line == 2);
  CHECK(first.clocks == SampleClocks::kBurst);
  CHECK(first.moe.tokens == 1);
  CHECK(first.moe.load.active_experts == 8);
  CHECK(first.time_s == approx(41.840001940727234e-6).epsilon(1e-12));
  CHECK(t.samples[4].op == "moe bfloat16 power_law_1.2");
  CHECK(t.samples[5].op == "moe nongated fp8 balanced");
  CHECK_FALSE(t.samples[5].moe.gated);
  CHECK(t.samples[5].moe.expert_ffn == 5120.0 / 16);
  CHECK(t.samples[5].dtype == DType::kFp8);
  CHECK(t.samples[6].recipe == GemmRecipe::kBlockScaled);
  const AicMoeTable a100 = read_aic_moe_table(kData + "/a100_sxm/moe_perf.csv");
  REQUIRE(a100.samples.size() == 1);
  CHECK(a100.samples[0].op == "moe bfloat16 power_law_1.2");
  CHECK(a100.samples[0].moe.gated);

  // Measured against predicted on H100's GEMM calibration: one rank, balanced, from one token
  // (eight experts' weights streamed) to 4096 (every expert compute-bound), and the busiest of 8
  // ranks under the power-law skew. The file's MoE parameters were fitted on the table's balanced
  // rows, this layer's among them (its shape is not held out): a check that the file reads back
  // as fitted; the held-out error is the file's held_out_moe_error.
  const hw::GpuSpec g = catalog_gpu("H100-SXM5-80GB");
  Calibration cal;
  cal.kernel = KernelParams::defaults_for(g);
  cal = load_calibration(cal, std::string(EXASIM_SOURCE_DIR) + "/configs/calibration/h100-sxm5-80gb-aic.yaml");
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(t.samples[i].line);
    CHECK(predict_sample(g, cal.kernel, t.samples[i]) / t.samples[i].time_s == approx(1.0).epsilon(0.15));
  }
  // The skewed rank is the op's weakest part: -12% here; over the whole H100 table the power-law
  // rows of 2048 tokens or more over several ranks come out 12% fast (median; 2026-12-07, 17-20%
  // before the MoE GEMMs got their own parameters). This bound keeps it from worsening.
  const double skewed = predict_sample(g, cal.kernel, t.samples[4]) / t.samples[4].time_s;
  CHECK(skewed > 0.75);
  CHECK(skewed < 1.0);
}

TEST_CASE("AIConfigurator MoE tables: malformed rows are refused with file, line and column") {
  const auto error_of = [](const char* file) {
    return exasim::testing::located_error([&] { read_aic_moe_table(kData + "/bad/" + file); });
  };
  exasim::testing::check_refusals(error_of, {
      {"moe_ep.csv", 2, "moe_ep_size: moe_ep_size does not divide num_experts"},
      {"moe_tp.csv", 2, "moe_tp_size: moe_tp_size does not divide inter_size"},
      {"moe_topk.csv", 2, "topk: topk above num_experts"},
      {"moe_distribution.csv", 2, "distribution: unknown distribution \"zipf\""},
      {"moe_alpha.csv", 2, "distribution: unknown distribution \"power_law_0\""},
      // Issue 29's UBSan finding: x^(1 - 300) overflows the draw, and 65536 experts the counts.
      {"moe_alpha_huge.csv", 2, "distribution: unknown distribution \"power_law_300\""},
      {"moe_experts.csv", 2, "num_experts: num_experts above 4096"},
      {"moe_source.csv", 2, "kernel_source: unknown kernel_source \"moe_torch_flow_magic\""},
      {"moe_latency.csv", 2, "latency: latency must be positive"},
      {"moe_mxfp4_only.csv", 2, ": no MoE call in the table the model can price"},
  });
}

TEST_CASE("AIConfigurator MoE tables: balanced rows slower than a measurement of more work are left out") {
  const auto row = [](double tokens, int ep, double time_us, const char* op = "moe bfloat16 balanced") {
    KernelSample s;
    s.kind = SampleKind::kMoeExperts;
    s.op = op;
    s.moe.hidden = 4096, s.moe.expert_ffn = 1024, s.moe.experts = 64, s.moe.top_k = 4;
    s.tokens = s.moe.tokens = tokens, s.ep = ep, s.time_s = time_us * 1e-6;
    return s;
  };
  std::vector<KernelSample> rows = {
      // One rank: 16 tokens took 5x what 32 did (dropped); 64 within 1.3x of 128's time (kept).
      row(16, 1, 100), row(32, 1, 20), row(64, 1, 30), row(128, 1, 25),
      // Two ranks, each half the work, measured twice as slow at every token count: all dropped.
      row(16, 2, 40), row(32, 2, 40), row(64, 2, 60), row(128, 2, 50),
      // Four ranks against two: faster, kept. A skewed row is not judged (its draw varies).
      row(16, 4, 10), row(32, 4, 10), row(64, 4, 10), row(128, 4, 10), row(16, 1, 500, "moe bfloat16 power_law_1.2")};
  const MoeRowsDropped d = drop_moe_rows_slower_than_more_work(rows);
  CHECK(d.than_more_tokens == 1);
  CHECK(d.than_half_ranks == 4);
  REQUIRE(rows.size() == 8);
  CHECK(rows[0].tokens == 32);
  CHECK(rows[2].tokens == 128);
  CHECK(rows[3].ep == 4);
  CHECK(rows.back().op == "moe bfloat16 power_law_1.2");
}

TEST_CASE("MoE token-permute kernels: their own bandwidth, the streaming kernels' where unset") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams truth = KernelParams::defaults_for(h100);
  truth.gather_efficiency = 0.45;
  // 0: the streaming kernels' fraction; a value: bytes at that fraction of HBM once large.
  KernelParams unset = truth;
  unset.gather_efficiency = 0;
  CHECK(gather_kernel(h100, unset, 1e9, 0).time_s == streaming_kernel(h100, unset, 1e9, 0).time_s);
  CHECK(gather_kernel(h100, truth, 1e9, 0).time_s ==
        approx(1e9 / (0.45 * h100.hbm_bandwidth) + truth.memory_op_overhead_s).epsilon(0.01));
}

TEST_CASE("MoE grouped GEMMs: their own matrix and weight-stream efficiency by format, the dense GEMM's where unset") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams p = KernelParams::defaults_for(h100);
  // Unset: the grouped GEMM is the batched dense GEMM, to the bit.
  for (const auto& [dtype, recipe] : std::vector<std::pair<DType, GemmRecipe>>{
           {DType::kBf16, GemmRecipe::kDense}, {DType::kFp8, GemmRecipe::kBlockScaled}, {DType::kFp4, GemmRecipe::kDense}})
    CHECK(grouped_gemm_time(h100, p, dtype, 512, 4096, 7168, 32, recipe).time_s ==
          gemm_time(h100, p, dtype, 512, 4096, 7168, 32, recipe).time_s);
  // The slots: 16-bit and weight-only main loops, dense 8-bit, block-scaled 8-bit, 4-bit.
  CHECK(KernelParams::moe_gemm_slot(DType::kBf16, GemmRecipe::kDense) == KernelParams::kMoeGemmBf16);
  CHECK(KernelParams::moe_gemm_slot(DType::kInt4, GemmRecipe::kWeightOnly) == KernelParams::kMoeGemmBf16);
  CHECK(KernelParams::moe_gemm_slot(DType::kFp8, GemmRecipe::kDense) == KernelParams::kMoeGemmFp8);
  CHECK(KernelParams::moe_gemm_slot(DType::kFp8, GemmRecipe::kBlockScaled) == KernelParams::kMoeGemmFp8Block);
  CHECK(KernelParams::moe_gemm_slot(DType::kFp4, GemmRecipe::kDense) == KernelParams::kMoeGemmFp4);
  // Set for block-scaled fp8 at half the dense kernel's: a compute-bound grouped GEMM (256 experts
  // of 512 rows, 7168 x 4096) takes about twice as long, its matrix term exactly twice; a
  // weight-streaming one (4 rows an expert) barely moves; bf16 keeps the dense efficiency.
  KernelParams half = p;
  half.moe_gemm_efficiency[KernelParams::kMoeGemmFp8Block] = p.matrix_efficiency_for(DType::kFp8, GemmRecipe::kBlockScaled) / 2;
  const double big = grouped_gemm_time(h100, p, DType::kFp8, 512, 4096, 7168, 256, GemmRecipe::kBlockScaled).time_s;
  const double big_half = grouped_gemm_time(h100, half, DType::kFp8, 512, 4096, 7168, 256, GemmRecipe::kBlockScaled).time_s;
  CHECK(big_half / big == approx(2.0).epsilon(0.1));
  const double flops = 2.0 * 512 * 4096 * 7168 * 256;
  CHECK(big_half >= flops / (h100.peak(DType::kFp8) * half.moe_gemm_efficiency[KernelParams::kMoeGemmFp8Block]));
  const double thin = grouped_gemm_time(h100, p, DType::kFp8, 4, 4096, 7168, 256, GemmRecipe::kBlockScaled).time_s;
  const double thin_half = grouped_gemm_time(h100, half, DType::kFp8, 4, 4096, 7168, 256, GemmRecipe::kBlockScaled).time_s;
  CHECK(thin_half / thin < 1.1);
  // The weight stream at half the HBM efficiency: the thin one (256 experts' 7.5 GB of fp8
  // weights) about twice as long, no faster than those bytes at that rate.
  KernelParams slow_stream = p;
  slow_stream.moe_gemm_hbm_efficiency[KernelParams::kMoeGemmFp8Block] = p.hbm_efficiency / 2;
  const double thin_slow = grouped_gemm_time(h100, slow_stream, DType::kFp8, 4, 4096, 7168, 256, GemmRecipe::kBlockScaled).time_s;
  CHECK(thin_slow / thin == approx(2.0).epsilon(0.1));
  CHECK(thin_slow >= 256 * 4096.0 * 7168 / (h100.hbm_bandwidth * p.hbm_efficiency / 2));
  CHECK(grouped_gemm_time(h100, half, DType::kBf16, 512, 4096, 7168, 256).time_s ==
        grouped_gemm_time(h100, p, DType::kBf16, 512, 4096, 7168, 256).time_s);
  // The MoE op's up and down GEMMs are these grouped GEMMs.
  MoeExpertsShape s;
  s.tokens = 16384, s.hidden = 7168, s.expert_ffn = 2048, s.top_k = 8, s.experts = 256;
  s.load = busiest_rank_experts(ExpertRouting{}, s.tokens, 8, 256, 1);
  const GemmFormat& block = *find_gemm_format("fp8_block", DType::kFp8);
  const MoeExpertsCost c = moe_experts_time(h100, half, block, s);
  CHECK(c.up.time_s == grouped_gemm_time(h100, half, DType::kFp8, s.load.routed_tokens / s.load.active_experts, 4096, 7168,
                                         s.load.active_experts, GemmRecipe::kBlockScaled).time_s);
}

TEST_CASE("MoE fit: the permutes' bandwidth and each format's grouped GEMMs and fixed cost recovered from data the model generated, on the balanced rows") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams truth = KernelParams::defaults_for(h100);
  truth.gather_efficiency = 0.45;
  truth.moe_gemm_efficiency[KernelParams::kMoeGemmBf16] = 0.7;
  truth.moe_gemm_efficiency[KernelParams::kMoeGemmFp8Block] = 0.25;
  truth.moe_gemm_hbm_efficiency[KernelParams::kMoeGemmBf16] = 0.85;
  truth.moe_gemm_hbm_efficiency[KernelParams::kMoeGemmFp8Block] = 0.6;
  truth.moe_op_overhead_s[KernelParams::kMoeGemmBf16] = 6e-6;
  truth.moe_op_overhead_s[KernelParams::kMoeGemmFp8Block] = 40e-6;
  std::vector<KernelSample> samples;
  for (const char* format : {"bfloat16", "fp8_block"})
    for (const char* dist : {"balanced", "power_law_1.2"})
      for (double tokens : {1.0, 16.0, 64.0, 256.0, 2048.0, 8192.0, 16384.0})
        for (int ep : {1, 8, 32}) {
          const GemmFormat& f = *find_gemm_format(format, DType::kBf16);
          KernelSample s;
          s.kind = SampleKind::kMoeExperts, s.source = "synthetic", s.timing = SampleTiming::kKernel;
          s.clocks = SampleClocks::kBurst, s.op = std::string("moe ") + format + " " + dist, s.ep = ep;
          s.dtype = f.dtype, s.recipe = f.recipe, s.cast = f.cast;
          s.moe.tokens = s.tokens = tokens, s.moe.hidden = 4096, s.moe.expert_ffn = 1536, s.moe.top_k = 8, s.moe.experts = 128;
          s.moe.load = busiest_rank_experts(*parse_expert_routing(dist), tokens, 8, 128, ep);
          s.time_s = predict_sample(h100, truth, s);
          // The skewed rows carry a 30% error the fit must not absorb (their load is a model).
          if (s.op.ends_with("power_law_1.2")) s.time_s *= 1.3;
          samples.push_back(s);
        }
  KernelCalibrationOptions o;
  o.held_out_shapes = 0;
  o.fit.samples = 16, o.fit.local_fits = 4;
  const KernelCalibration c = calibrate_kernels(h100, samples, o);
  CHECK(c.fitted.gather_efficiency == approx(0.45).epsilon(0.03));
  CHECK(c.fitted.moe_gemm_efficiency[KernelParams::kMoeGemmBf16] == approx(0.7).epsilon(0.03));
  CHECK(c.fitted.moe_gemm_efficiency[KernelParams::kMoeGemmFp8Block] == approx(0.25).epsilon(0.03));
  CHECK(c.fitted.moe_gemm_hbm_efficiency[KernelParams::kMoeGemmBf16] == approx(0.85).epsilon(0.03));
  CHECK(c.fitted.moe_gemm_hbm_efficiency[KernelParams::kMoeGemmFp8Block] == approx(0.6).epsilon(0.03));
  CHECK(c.fitted.moe_op_overhead_s[KernelParams::kMoeGemmBf16] == approx(6e-6).epsilon(0.1));
  CHECK(c.fitted.moe_op_overhead_s[KernelParams::kMoeGemmFp8Block] == approx(40e-6).epsilon(0.05));
  // No fp8 per-tensor or nvfp4 rows: those slots stay unset (the dense GEMM's).
  CHECK(c.fitted.moe_gemm_efficiency[KernelParams::kMoeGemmFp8] == 0);
  CHECK(c.fitted.moe_gemm_efficiency[KernelParams::kMoeGemmFp4] == 0);
  for (const char* name : {"moe_gemm_efficiency.bf16", "moe_gemm_efficiency.fp8_block", "moe_gemm_hbm_efficiency.bf16",
                           "moe_op_overhead.fp8_block"})
    CHECK(std::find(c.fitted_names.begin(), c.fitted_names.end(), name) != c.fitted_names.end());
}

TEST_CASE("AIConfigurator MoE tables: the min-latency kernels are left out and counted, CUTLASS, DeepGEMM and nongated read") {
  const AicMoeTable t = read_aic_moe_table(kData + "/b200_sxm/moe_perf.csv");
  // Three min-latency rows left out: they time other kernels than the rows of the same shape
  // beside them (16 tokens: 84.8 us against CUTLASS's 184.9 us), so one op name cannot hold both.
  REQUIRE(t.left_out.size() == 1);
  CHECK(t.left_out.at("moe_torch_flow_min_latency (another kernel, not modelled)") == 3);
  REQUIRE(t.samples.size() == 5);
  CHECK(t.samples[1].op == "moe nvfp4 balanced");
  CHECK(t.samples[1].time_s == approx(0.18490133682886759e-3).epsilon(1e-12));
  CHECK(t.samples[1].dtype == DType::kFp4);
  CHECK(t.samples[3].op == "moe fp8_block balanced");
  CHECK(t.samples[3].recipe == GemmRecipe::kBlockScaled);
  CHECK(t.samples[4].op == "moe nongated nvfp4 power_law_1.01");
  CHECK_FALSE(t.samples[4].moe.gated);
  for (const KernelSample& s : t.samples) CHECK(s.line != 5);  // line 5: a min-latency row
}

TEST_CASE("MoE rows that read their experts' weights faster than HBM are left out: the replays found them in L2") {
  const hw::GpuSpec l40s = catalog_gpu("L40S");
  // L40S's table: 1 token of Mixtral's layer (4096 x 14336, top 2 of 8) at TP 4, EP 2 in 42.5 us:
  // the busiest rank's one expert, up and down weights of 4096 x 3584 x 3 x 2 bytes, 1.2x the
  // GDDR6 peak.
  KernelSample warm;
  warm.kind = SampleKind::kMoeExperts, warm.dtype = DType::kBf16, warm.op = "moe bfloat16 balanced";
  warm.moe.hidden = 4096, warm.moe.expert_ffn = 14336.0 / 4, warm.moe.top_k = 2, warm.moe.experts = 8;
  warm.moe.tokens = warm.tokens = 1, warm.ep = 2, warm.tp = 4;
  warm.moe.load = busiest_rank_experts(ExpertRouting{}, 1, 2, 8, 2);
  REQUIRE(warm.moe.load.active_experts == 1);
  warm.time_s = 42.496e-6;
  const double bytes = 4096.0 * 3584 * 3 * 2;
  CHECK(hbm_fraction(l40s, warm) == approx(bytes / 42.496e-6 / l40s.hbm_bandwidth));
  CHECK(hbm_fraction(l40s, warm) > 1.1);
  // The same at 4096 tokens (all four of the rank's experts, 2.5 ms): from GDDR6. A plain
  // activation has no gate (2 matrices an expert); fp4 weights are half a byte.
  KernelSample cold = warm;
  cold.moe.load = {4, 2048}, cold.time_s = 2.5e-3;
  CHECK(hbm_fraction(l40s, cold) < 0.2);
  KernelSample plain = warm;
  plain.moe.gated = false, plain.dtype = DType::kFp4;
  CHECK(hbm_fraction(l40s, plain) == approx(4096.0 * 3584 * 2 * 0.5 / 42.496e-6 / l40s.hbm_bandwidth));
  std::vector<KernelSample> rows{warm, cold, plain};
  const FasterThanHbm dropped = drop_faster_than_hbm(l40s, rows);
  CHECK(dropped.moe == 1);
  CHECK(dropped.gemm == 0);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].time_s == 2.5e-3);
}
