// NVIDIA AIConfigurator attention tables (kernels-aic): the reader on committed slices of the
// H100 (TensorRT-LLM 1.3), A100 (1.0: constant columns left out) and GB200 (with power) tables,
// malformed rows refused with file, line and column, the op the tables time (QKV preprocessing
// and the attention kernel) by hand, and the attention parameters fitted back from data the
// model generated.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "hw/error.hpp"
#include "kernel_test_gpus.hpp"
#include "located_error.hpp"
#include "models/calibration/aic_attention_table.hpp"
#include "models/calibration/kernel_calibration.hpp"
#include "models/kernel/attention_model.hpp"

using namespace exasim;
using namespace exasim::models;
using exasim::testing::approx;
using exasim::testing::catalog_gpu;

namespace {

const std::string kData = std::string(EXASIM_TEST_DATA) + "/kernels-aic";

std::pair<int, std::string> error_of(const std::string& file) {
  return exasim::testing::located_error([&] { read_aic_attention_table(kData + "/bad/" + file); });
}

}  // namespace

TEST_CASE("AIConfigurator attention tables: prefill and decode rows, the FMHA's dtype follows the cache") {
  const std::string context = kData + "/h100_sxm/context_attention_perf.csv";
  const std::string generation = kData + "/h100_sxm/generation_attention_perf.csv";
  REQUIRE(is_aic_attention_table(context));
  REQUIRE(is_aic_attention_table(generation));
  CHECK_FALSE(is_aic_attention_table(kData + "/h100_sxm/gemm_perf.csv"));
  const std::vector<KernelSample> p = read_aic_attention_table(context);
  REQUIRE(p.size() == 5);
  // 1,4096,32,8,128,0,bfloat16,bfloat16,0.33874134222666424
  CHECK(p[0].kind == SampleKind::kAttentionPrefill);
  CHECK(p[0].source == "h100_sxm");
  CHECK(p[0].line == 2);
  CHECK(p[0].timing == SampleTiming::kKernel);
  CHECK(p[0].batch == 1);
  CHECK(p[0].seq == 4096);
  CHECK(p[0].tokens == 4096);
  CHECK(p[0].heads == 32);
  CHECK(p[0].kv_heads == 8);
  CHECK(p[0].head_dim == 128);
  CHECK(p[0].window == 0);
  CHECK(p[0].dtype == DType::kBf16);
  CHECK(p[0].op == "prefill bf16");
  CHECK(p[0].time_s == approx(338.74134222666424e-6).epsilon(1e-12));
  // bf16 activations with an fp8 cache run the fp8 kernel (and are faster than bf16 throughout).
  CHECK(p[1].dtype == DType::kFp8);
  CHECK(p[1].cache_dtype == DType::kFp8);
  CHECK(p[1].op == "prefill fp8");
  CHECK(p[1].time_s < p[0].time_s);
  CHECK(p[2].dtype == DType::kFp8);
  CHECK(p[3].window == 128);
  CHECK(p[3].head_dim == 64);
  CHECK(p[3].tokens == 8 * 2048);
  const std::vector<KernelSample> d = read_aic_attention_table(generation);
  REQUIRE(d.size() == 3);
  // 1,32,8,128,0,bfloat16,4095,...: the prompt's one token and 4095 steps in the cache
  CHECK(d[0].kind == SampleKind::kAttentionDecode);
  CHECK(d[0].context == 4096);
  CHECK(d[0].tokens == 1);
  CHECK(d[0].op == "decode kv bf16");
  CHECK(d[1].dtype == DType::kFp8);
  CHECK(d[1].batch == 64);
  CHECK(d[1].op == "decode kv fp8");
  CHECK(d[2].window == 128);
}

TEST_CASE("AIConfigurator attention tables: TensorRT-LLM 1.0's constant columns and a power column") {
  // a100_sxm leaves out head_dim, window and the dtypes (MANIFEST.tsv: 128, 0, bfloat16).
  const std::vector<KernelSample> a = read_aic_attention_table(kData + "/a100_sxm/context_attention_perf.csv");
  REQUIRE(a.size() == 1);
  CHECK(a[0].head_dim == 128);
  CHECK(a[0].window == 0);
  CHECK(a[0].dtype == DType::kBf16);
  CHECK(a[0].time_s == approx(1.1453440189361572e-3).epsilon(1e-12));
  const std::vector<KernelSample> g = read_aic_attention_table(kData + "/a100_sxm/generation_attention_perf.csv");
  REQUIRE(g.size() == 1);
  CHECK(g[0].context == 4096);
  CHECK(g[0].dtype == DType::kBf16);
  const std::vector<KernelSample> gb = read_aic_attention_table(kData + "/gb200/context_attention_perf.csv");
  REQUIRE(gb.size() == 1);
  CHECK(gb[0].power_w == approx(1125.0735));
}

TEST_CASE("AIConfigurator attention tables: a malformed row is refused with its file, line and column") {
  const auto kv = error_of("attention_kv_heads.csv");
  CHECK(kv.first == 3);
  CHECK(kv.second.find("num_key_value_heads: more key/value heads than query heads") == 0);
  const auto dtype = error_of("attention_dtype.csv");
  CHECK(dtype.first == 2);
  CHECK(dtype.second.find("kv_cache_dtype: unknown kv_cache_dtype \"nvfp4\"") == 0);
  CHECK(dtype.second.find("bfloat16, float16, fp8") != std::string::npos);
  const auto latency = error_of("attention_latency.csv");
  CHECK(latency.first == 3);
  CHECK(latency.second.find("latency must be positive") != std::string::npos);
  CHECK_THROWS_AS(read_aic_attention_table(kData + "/bad/absent.csv"), IoError);
}

TEST_CASE("AIConfigurator MLA tables: DeepSeek's latent attention in the cache's dtype, decode over step + 1 tokens") {
  const std::string context = kData + "/h100_sxm/context_mla_perf.csv";
  const std::string generation = kData + "/h100_sxm/generation_mla_perf.csv";
  REQUIRE(is_aic_attention_table(context));
  REQUIRE(is_aic_attention_table(generation));
  const std::vector<KernelSample> p = read_aic_attention_table(context);
  REQUIRE(p.size() == 4);
  // bfloat16,128,1,4096,1,1.2629066308339436
  CHECK(p[2].kind == SampleKind::kAttentionPrefill);
  CHECK(p[2].mla);
  CHECK(p[2].heads == 128);
  CHECK(p[2].batch == 1);
  CHECK(p[2].seq == 4096);
  CHECK(p[2].tokens == 4096);
  CHECK(p[2].tp == 1);
  CHECK(p[2].op == "mla prefill kv bf16");
  CHECK(p[2].time_s == approx(1.2629066308339436e-3).epsilon(1e-12));
  // An fp8 cache: the row is read as the fp8 op (on H100, quantize + fp8 FMHA: the slower one
  // at this size).
  CHECK(p[3].cache_dtype == DType::kFp8);
  CHECK(p[3].dtype == DType::kFp8);
  CHECK(p[3].op == "mla prefill kv fp8");
  CHECK(p[3].time_s > p[2].time_s);
  const std::vector<KernelSample> d = read_aic_attention_table(generation);
  REQUIRE(d.size() == 4);
  // fp8,16,32,4,8191,0.07312533259391785: 16 heads (128 over TP 4), 32 sequences of 8192 tokens
  CHECK(d[3].kind == SampleKind::kAttentionDecode);
  CHECK(d[3].mla);
  CHECK(d[3].heads == 16);
  CHECK(d[3].tp == 4);
  CHECK(d[3].context == 8192);
  CHECK(d[3].tokens == 32);
  CHECK(d[3].dtype == DType::kFp8);
  CHECK(d[3].op == "mla decode kv fp8");
  // GQA tables are not read as MLA.
  CHECK_FALSE(read_aic_attention_table(kData + "/h100_sxm/generation_attention_perf.csv").front().mla);
  const auto heads = error_of("mla_heads.csv");
  CHECK(heads.first == 3);
  CHECK(heads.second.find("num_heads") == 0);
  const auto dtype = error_of("mla_dtype.csv");
  CHECK(dtype.first == 2);
  CHECK(dtype.second.find("kv_cache_dtype: unknown kv_cache_dtype \"nvfp4\"") == 0);
}

TEST_CASE("MLA kernels by hand: decode streams one shared latent row per token, prefill's PV runs at V's head dimension") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  const KernelParams p = KernelParams::defaults_for(h100);
  // Decode: 32 sequences of 8192 tokens, 16 heads over one latent of 512 + 64: the cache is read
  // once (K and V are the same row), in 64-token pages; each head's scores over 576 dims and its
  // output over the 512 of V: 2 x (576 + 512) FLOPs per head and token.
  const DecodeShape d = mla_decode_shape(32, 8192, 16);
  CHECK(d.head_dim == 576);
  CHECK(d.value_dim == 512);
  CHECK(d.kv_heads == 1);
  const KernelCost c = attention_decode(h100, p, DType::kBf16, d);
  CHECK(c.flops == approx(2.0 * 32 * 16 * 8192 * (576 + 512)));
  // Bytes: the cache, Q in and O out, then (the family defaults price no in-kernel reduction)
  // a second kernel reading the split-KV partials (fp32 O and two statistics per head and split)
  // and writing O.
  REQUIRE(p.decode_cta_bandwidth[0] == 0);
  const int splits = decode_launch(h100, p, d).splits;
  REQUIRE(splits > 1);
  const double cache = 32 * 8192 * 576 * 2.0, q_o = 32 * 16 * (576 + 512) * 2.0;
  const double reduce = 32 * 16 * splits * (512 + 2) * 4.0 + 32 * 16 * 512 * 2.0;
  CHECK(c.bytes == approx(cache + q_o + reduce).epsilon(1e-12));
  // Read as separate K and V rows, the same shape would also stream V's 512 dims per token.
  DecodeShape separate = d;
  separate.shared_kv = false;
  CHECK(attention_decode(h100, p, DType::kBf16, separate).bytes - c.bytes == approx(32 * 8192 * 512 * 2.0));
  // 128 heads on one latent: one kernel serves them all together, whatever the group limit.
  KernelParams limited = p;
  limited.decode_group_limit = 16;
  CHECK(decode_launch(h100, limited, mla_decode_shape(1, 4096, 128)).grouped);
  // Prefill: 128 heads of Q, K 192 and V 128: 2 x (192 + 128) FLOPs per visible pair.
  const AttentionShape a = mla_prefill_shape(1, 4096, 128);
  CHECK(a.head_dim == 192);
  CHECK(a.value_dim == 128);
  const double pairs = 4096.0 * 4097 / 2;
  CHECK(attention_prefill(h100, p, DType::kBf16, a).flops == approx(2.0 * 128 * (192 + 128) * pairs));
  // Under an fp8 cache, H100 quantizes Q (192), K (192) and V (128) of every head and token
  // (2 bytes read, 1 written) and runs the FMHA in fp8; A100 keeps its bf16 FMHA.
  const KernelCost fp8 = mla_prefill(h100, p, DType::kFp8, a);
  const double elements = 128 * 4096 * (192 + 192 + 128.0);
  CHECK(fp8.bytes - attention_prefill(h100, p, DType::kFp8, a).bytes == approx(3 * elements));
  CHECK(fp8.time_s == approx(attention_prefill(h100, p, DType::kFp8, a).time_s +
                             streaming_kernel(h100, p, 3 * elements, elements).time_s).epsilon(1e-12));
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams pa = KernelParams::defaults_for(a100);
  CHECK(mla_prefill(a100, pa, DType::kFp8, a).time_s == mla_prefill(a100, pa, DType::kBf16, a).time_s);
  // One head of one prompt: H100's kernel keeps 128 query rows at head_dim 192, so 16384 tokens
  // are 128 CTAs on its 132 SMs and the time only doubles from 8192 (kernels-aic bf16: 1.99x);
  // A100's 64 rows need 256 CTAs on 108 SMs at 16384 (measured 2.9x).
  const auto doubling = [](const hw::GpuSpec& g, const KernelParams& q) {
    return mla_prefill(g, q, DType::kBf16, mla_prefill_shape(1, 16384, 1)).time_s /
           mla_prefill(g, q, DType::kBf16, mla_prefill_shape(1, 8192, 1)).time_s;
  };
  CHECK(doubling(h100, p) == approx(1.99).epsilon(0.1));
  CHECK(doubling(a100, pa) > 2.4);
  // A value dimension equal to the head dimension is the plain kernel.
  AttentionShape square{2, 1024, 0, 32, 8, 128};
  AttentionShape same = square;
  same.value_dim = 128;
  CHECK(attention_prefill(h100, p, DType::kBf16, same).time_s ==
        approx(attention_prefill(h100, p, DType::kBf16, square).time_s).epsilon(1e-12));
}

TEST_CASE("the context op: QKV preprocessing bytes by hand, then the FMHA") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams p = KernelParams::defaults_for(h100);
  // 4096 tokens, 32 query and 8 key/value heads of 128: reads 48 vectors of bf16, writes Q (32)
  // in fp8 and K, V (16) in fp8.
  const KernelCost pre = qkv_preprocess(h100, p, 4096, 32, 8, 128, DType::kBf16, DType::kFp8, DType::kFp8);
  CHECK(pre.bytes == approx(4096.0 * 128 * (48 * 2 + 48 * 1)));
  CHECK(pre.flops == approx(3.0 * 4096 * 40 * 128));
  CHECK(pre.time_s == approx(p.memory_op_overhead_s + pre.bytes / (h100.hbm_bandwidth * p.memory_op_efficiency)).epsilon(0.02));
  KernelSample s;
  s.kind = SampleKind::kAttentionPrefill, s.batch = 1, s.seq = 4096, s.heads = 32, s.kv_heads = 8, s.head_dim = 128;
  s.dtype = s.cache_dtype = DType::kFp8, s.timing = SampleTiming::kKernel;
  AttentionShape a;
  a.seq_q = 4096, a.heads = 32, a.kv_heads = 8;
  CHECK(predict_sample(h100, p, s) == approx(pre.time_s + attention_prefill(h100, p, DType::kFp8, a).time_s));
  // The per-CTA cost: 1 x 32 heads x 32 query blocks of 128 rows, packed on 132 SMs.
  const double without = attention_prefill(h100, p, DType::kBf16, a).time_s;
  p.attention_cta_overhead_s = 10e-6;
  const double with = attention_prefill(h100, p, DType::kBf16, a).time_s;
  // Both matrix-bound: the CTAs' cost spread over the SMs replaces a GEMM's tile_overhead per wave;
  // on the SMs, it runs under the power limit as the tiles do (~1.7 ms of work: past the window).
  CHECK(with - without == approx(32 * 32 * 10e-6 / 132 / p.sustained_clock_fraction -
                                 std::ceil(32 * 32 / 132.0) * p.tile_overhead_s).epsilon(0.01));
  // The power limit, as for GEMMs: a training step (sustained) runs all of the on-chip time at the
  // sustained clocks, burst clocks none of it.
  KernelParams burst = p, held = p;
  burst.sustained_clock_fraction = 1, held.sustained_load = true;
  const double fixed = p.launch_overhead_s + p.attention_overhead_s[0];
  REQUIRE(p.sustained_clock_fraction < 0.95);
  CHECK(attention_prefill(h100, held, DType::kBf16, a).time_s - fixed ==
        approx((attention_prefill(h100, burst, DType::kBf16, a).time_s - fixed) / p.sustained_clock_fraction).epsilon(1e-9));
  // Decode: the cache keeps only a sliding window's keys.
  KernelSample w;
  w.kind = SampleKind::kAttentionDecode, w.batch = 8, w.context = 4096, w.heads = 32, w.kv_heads = 8, w.window = 128;
  KernelSample full = w;
  full.context = 128, full.window = 0;
  CHECK(predict_sample(h100, p, w) == predict_sample(h100, p, full));
}

TEST_CASE("attention fit: recovers the kernels' efficiencies and fixed costs from data the model generated") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams truth = KernelParams::defaults_for(h100);
  truth.smem_operand_mma = truth.stream_k = truth.narrow_output_16bit = 1;
  truth.attention_efficiency = 0.55, truth.attention_efficiency_fp8 = 0.42;
  truth.attention_overhead_s = {9e-6, 7e-6, 4e-6};
  truth.attention_cta_overhead_s = 4e-6, truth.attention_cta_bandwidth = 25e9;
  truth.attention_decode_efficiency = 0.85, truth.decode_cta_overhead_s = {4e-6, 1.5e-6};
  truth.decode_head_cta_overhead_s = 1.2e-6, truth.decode_cta_bandwidth = {60e9, 25e9};
  truth.decode_group_limit = 32;
  std::vector<KernelSample> samples;
  for (DType t : {DType::kBf16, DType::kFp8})
    for (double b : {1.0, 8.0, 64.0})
      for (double seq : {1.0, 128.0, 1024.0, 4096.0, 16384.0})
        for (double heads : {8.0, 32.0, 64.0}) {
          if (b * seq > 65536) continue;
          // Decode also with every head its own (MHA) and with one KV head for 64 (a group above
          // the grouped kernel's 32): both per-head CTAs.
          for (double kv : {heads, 1.0}) {
            if (kv == 8 && heads == 8) continue;
            KernelSample d;
            d.kind = SampleKind::kAttentionDecode, d.source = "synthetic", d.timing = SampleTiming::kKernel;
            d.batch = b * 4, d.context = seq, d.tokens = b * 4, d.heads = heads, d.kv_heads = kv, d.head_dim = 128;
            d.dtype = d.cache_dtype = t, d.op = "decode";
            d.time_s = predict_sample(h100, truth, d);
            samples.push_back(d);
          }
          KernelSample s;
          s.kind = SampleKind::kAttentionPrefill, s.source = "synthetic", s.timing = SampleTiming::kKernel;
          s.batch = b, s.seq = seq, s.tokens = b * seq, s.heads = heads, s.kv_heads = heads / 8, s.head_dim = 128;
          s.dtype = s.cache_dtype = t, s.op = t == DType::kFp8 ? "prefill fp8" : "prefill bf16";
          s.time_s = predict_sample(h100, truth, s);
          samples.push_back(s);
          KernelSample d = s;
          d.kind = SampleKind::kAttentionDecode, d.seq = 0, d.context = seq, d.tokens = b, d.op = "decode";
          d.time_s = predict_sample(h100, truth, d);
          samples.push_back(d);
        }
  KernelCalibrationOptions o;
  o.held_out_shapes = 0, o.library_behaviours = true;
  o.fit.samples = 24, o.fit.local_fits = 8;
  const KernelCalibration c = calibrate_kernels(h100, samples, o);
  CHECK(c.prefill_fit_error < 0.01);
  CHECK(c.decode_fit_error < 0.01);
  const KernelParams& f = c.fitted;
  CHECK(f.attention_efficiency == approx(0.55).epsilon(0.02));
  CHECK(f.attention_efficiency_fp8 == approx(0.42).epsilon(0.02));
  CHECK(f.attention_cta_overhead_s == approx(4e-6).epsilon(0.05));
  CHECK(f.attention_cta_bandwidth == approx(25e9).epsilon(0.1));
  CHECK(f.attention_overhead_s[0] == approx(9e-6).epsilon(0.1));
  CHECK(f.attention_decode_efficiency == approx(0.85).epsilon(0.02));
  CHECK(f.attention_overhead_s[1] == approx(7e-6).epsilon(0.1));
  CHECK(f.attention_overhead_s[2] == approx(4e-6).epsilon(0.1));
  CHECK(f.decode_cta_overhead_s[0] == approx(4e-6).epsilon(0.1));
  CHECK(f.decode_cta_overhead_s[1] == approx(1.5e-6).epsilon(0.1));
  CHECK(f.decode_head_cta_overhead_s == approx(1.2e-6).epsilon(0.1));
  CHECK(f.decode_cta_bandwidth[0] == approx(60e9).epsilon(0.1));
  CHECK(f.decode_cta_bandwidth[1] == approx(25e9).epsilon(0.1));
  CHECK(f.decode_group_limit == 32);
  for (const char* n : {"attention_efficiency", "attention_cta_overhead", "decode_cta_overhead.fp8", "decode_group_limit"})
    CHECK(std::find(c.fitted_names.begin(), c.fitted_names.end(), n) != c.fitted_names.end());
}

TEST_CASE("MLA decode without split-KV: one CTA walks each sequence's cache at MLA's CTA rate (A100, L40S)") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  KernelParams p = KernelParams::defaults_for(a100);
  p.decode_cta_overhead_s = {3e-6, 3e-6}, p.decode_cta_bandwidth = {40e9, 40e9};
  p.mla_decode_cta_bandwidth = 9e9, p.mla_decode_single_cta = 1;
  const DecodeShape d = mla_decode_shape(1, 8192, 16);
  // The launch: one sequence, one CTA, whatever the heads.
  DecodeShape one = d;
  one.split_kv = false;
  const DecodeLaunch l = decode_launch(a100, p, one);
  CHECK(l.splits == 1);
  CHECK(l.ctas == 1);
  // Its time: the op's fixed cost, the CTA's own, then 8192 tokens x 576 x 2 bytes at 9 GB/s
  // (1.05 ms, far above what HBM or the MMAs need for 9.4 MB).
  const double expected = p.launch_overhead_s + p.attention_overhead_s[1] + 3e-6 + 8192 * 576 * 2.0 / 9e9;
  CHECK(mla_decode(a100, p, DType::kBf16, d).time_s == approx(expected).epsilon(1e-9));
  // Twice the heads: the same time (the latent is read once for all of them).
  CHECK(mla_decode(a100, p, DType::kBf16, mla_decode_shape(1, 8192, 32)).time_s == approx(expected).epsilon(1e-9));
  // With split-KV (Hopper's kernels) the same sequence spreads over many CTAs and takes far less.
  p.mla_decode_single_cta = 0;
  CHECK(mla_decode(a100, p, DType::kBf16, d).time_s < 0.2 * expected);
}

TEST_CASE("MLA fit: its kernels' efficiency and the op's fixed cost recovered apart from GQA attention's") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams truth = KernelParams::defaults_for(h100);  // GQA's as the test above recovers them
  truth.smem_operand_mma = truth.stream_k = truth.narrow_output_16bit = 1;
  truth.attention_efficiency = 0.55, truth.attention_overhead_s = {9e-6, 7e-6, 7e-6};
  truth.attention_cta_overhead_s = 4e-6;
  truth.attention_decode_efficiency = 0.75, truth.decode_cta_overhead_s = {4e-6, 4e-6};
  truth.decode_head_cta_overhead_s = 1.2e-6, truth.decode_cta_bandwidth = {60e9, 60e9};
  truth.decode_group_limit = 32;
  truth.mla_prefill_efficiency = 0.68, truth.mla_prefill_efficiency_fp8 = 0.41, truth.mla_decode_efficiency = 0.92;
  truth.mla_overhead_s = {12e-6, 13e-6};
  truth.attention_cta_bandwidth = 25e9;  // with GQA's CTA rate, MLA's CTAs have their own cost and rate
  truth.mla_prefill_cta_overhead_s = 6e-6, truth.mla_prefill_cta_bandwidth = 15e9;
  std::vector<KernelSample> samples;
  for (bool mla : {false, true})
    for (double b : {1.0, 8.0, 64.0})
      for (double seq : {1.0, 256.0, 2048.0, 8192.0})
        for (double heads : {16.0, 64.0, 128.0}) {
          KernelSample s;
          s.kind = SampleKind::kAttentionPrefill, s.source = "synthetic", s.timing = SampleTiming::kKernel;
          s.mla = mla, s.batch = b, s.seq = seq, s.tokens = b * seq, s.heads = heads, s.kv_heads = heads / 8;
          s.op = mla ? "mla prefill" : "prefill";
          s.time_s = predict_sample(h100, truth, s);
          if (b * seq <= 65536) samples.push_back(s);
          if (mla && b * seq <= 65536) {  // under an fp8 cache: quantized, its FMHA in fp8
            KernelSample q = s;
            q.dtype = q.cache_dtype = DType::kFp8, q.op = "mla prefill kv fp8";
            q.time_s = predict_sample(h100, truth, q);
            samples.push_back(q);
          }
          KernelSample d = s;
          d.kind = SampleKind::kAttentionDecode, d.seq = 0, d.context = seq + 1, d.batch = b * 4, d.tokens = b * 4;
          d.op = mla ? "mla decode" : "decode";
          d.time_s = predict_sample(h100, truth, d);
          samples.push_back(d);
        }
  KernelCalibrationOptions o;
  o.held_out_shapes = 0, o.library_behaviours = true;
  o.fit.samples = 24, o.fit.local_fits = 8;
  const KernelCalibration c = calibrate_kernels(h100, samples, o);
  const KernelParams& f = c.fitted;
  CHECK(f.attention_efficiency == approx(0.55).epsilon(0.02));
  CHECK(f.attention_decode_efficiency == approx(0.75).epsilon(0.02));
  CHECK(f.mla_prefill_efficiency == approx(0.68).epsilon(0.02));
  CHECK(f.mla_prefill_efficiency_fp8 == approx(0.41).epsilon(0.02));
  CHECK(f.mla_prefill_cta_overhead_s == approx(6e-6).epsilon(0.1));
  CHECK(f.mla_prefill_cta_bandwidth == approx(15e9).epsilon(0.1));
  CHECK(f.mla_decode_efficiency == approx(0.92).epsilon(0.02));
  CHECK(f.mla_overhead_s[0] == approx(12e-6).epsilon(0.1));
  CHECK(f.mla_overhead_s[1] == approx(13e-6).epsilon(0.1));
  CHECK(c.prefill_fit_error < 0.01);  // GQA's: MLA's samples are not in its stage
  for (const auto& s : samples) CHECK(predict_sample(h100, f, s) == approx(s.time_s).epsilon(0.02));
}

TEST_CASE("attention fit: the L2 rate the GEMMs leave open is fitted on the prefill attention measured beside them") {
  // GEMMs too small for L2 to bound them say nothing of its rate; long prefills are bound by it
  // (every K/V tile re-read from L2 per query tile). Fitted apart, the GEMM fit would leave the
  // rate where it started and the prefill fit could not move it.
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams truth = KernelParams::defaults_for(h100);
  truth.smem_operand_mma = truth.stream_k = truth.narrow_output_16bit = 1;
  truth.l2_efficiency = 0.3, truth.attention_efficiency = 0.8;
  truth.attention_overhead_s[0] = 6e-6, truth.attention_cta_overhead_s = 2e-6;
  KernelParams fast_l2 = truth;
  fast_l2.l2_efficiency = 1;
  std::vector<KernelSample> samples;
  for (double m : {1.0, 4.0, 16.0, 32.0, 64.0})
    for (double n : {1024.0, 2048.0, 4096.0, 8192.0, 16384.0})
      for (double k : {1024.0, 4096.0, 8192.0})
        for (DType t : {DType::kBf16}) {
          KernelSample g;
          g.kind = SampleKind::kGemm, g.source = "synthetic", g.timing = SampleTiming::kKernel;
          g.m = m, g.n = n, g.k = k, g.dtype = t, g.op = "bfloat16";
          g.time_s = predict_sample(h100, truth, g);
          if (predict_sample(h100, fast_l2, g) == approx(g.time_s).epsilon(1e-12)) samples.push_back(g);
        }
  const std::size_t gemms = samples.size();
  std::size_t l2_bound = 0;
  // Two head dimensions: a tile's L2 bytes and MMAs grow with it, its exponentials do not.
  for (double b : {1.0, 2.0, 4.0})
    for (double seq : {512.0, 2048.0, 4096.0, 8192.0})
      for (double heads : {16.0, 32.0, 64.0})
        for (double head_dim : {64.0, 128.0}) {
          KernelSample s;
          s.kind = SampleKind::kAttentionPrefill, s.source = "synthetic", s.timing = SampleTiming::kKernel;
          s.batch = b, s.seq = seq, s.tokens = b * seq, s.heads = heads, s.kv_heads = heads / 8, s.head_dim = head_dim;
          s.dtype = s.cache_dtype = DType::kBf16, s.op = "prefill bf16";
          s.time_s = predict_sample(h100, truth, s);
          if (predict_sample(h100, fast_l2, s) < 0.9 * s.time_s) ++l2_bound;
          samples.push_back(s);
        }
  REQUIRE(gemms >= 40);     // L2-blind GEMMs to fit
  REQUIRE(l2_bound >= 10);  // prefills that the L2 rate bounds
  KernelCalibrationOptions o;
  o.held_out_shapes = 0, o.library_behaviours = true, o.samples_per_parameter = 2;
  o.fit.samples = 24, o.fit.local_fits = 8;
  const KernelCalibration c = calibrate_kernels(h100, samples, o);
  CHECK(c.fitted.l2_efficiency == approx(0.3).epsilon(0.03));
  CHECK(c.prefill_fit_error < 0.01);
  CHECK(c.gemm_fit_error < 0.01);
}

TEST_CASE("decode launch: grouped CTAs up to the group limit, per-head above it, CTAs packed on the SMs") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams p = KernelParams::defaults_for(h100);
  p.decode_group_limit = 32, p.decode_cta_overhead_s = {5e-6, 2e-6}, p.decode_head_cta_overhead_s = 1.5e-6;
  p.decode_cta_bandwidth = {50e9, 20e9}, p.attention_decode_efficiency = 0.9;
  // 1024 sequences of 2 tokens: no split (fewer than 256 keys).
  DecodeShape grouped{1024, 2, 32, 8, 128, 16};
  DecodeShape mha{1024, 2, 32, 32, 128, 16};
  DecodeShape wide{1024, 2, 64, 1, 128, 16};  // a group of 64: above the limit
  CHECK(decode_launch(h100, p, grouped).grouped);
  CHECK(decode_launch(h100, p, grouped).ctas == 1024 * 8);
  CHECK(decode_launch(h100, p, mha).ctas == 1024 * 32);
  CHECK_FALSE(decode_launch(h100, p, wide).grouped);
  CHECK(decode_launch(h100, p, wide).ctas == 1024 * 64);
  // Each CTA: its fixed cost plus its own 2 keys x 128 x 2 B, K and V, at 50 GB/s; 8192 of them
  // over 132 SMs, far above the HBM time of the 16-token blocks.
  const double per_cta = 5e-6 + 2 * 2 * 128 * 2 / 50e9;
  const double expected = p.launch_overhead_s + 1024 * 8 * per_cta / 132;
  CHECK(attention_decode(h100, p, DType::kBf16, grouped).time_s == approx(expected).epsilon(1e-9));
  // An 8-bit cache: the grouped kernel's own per-CTA cost and rate (1 byte a value).
  CHECK(attention_decode(h100, p, DType::kFp8, grouped).time_s ==
        approx(p.launch_overhead_s + 1024 * 8 * (2e-6 + 2 * 2 * 128 / 20e9) / 132).epsilon(1e-9));
  // Per-head: 64 CTAs a sequence at the per-head cost.
  CHECK(attention_decode(h100, p, DType::kBf16, wide).time_s ==
        approx(p.launch_overhead_s + 1024 * 64 * (1.5e-6 + 2 * 2 * 128 * 2 / 50e9) / 132).epsilon(1e-9));
  // One sequence of 32768 tokens: 64 splits (the 8 KV heads fill 528 CTA slots at 66; capped at
  // 64). TensorRT-LLM reduces the splits in the kernel: the last CTA of each KV head reads its
  // group's 4 heads x 64 partials (128 fp32 values and 2 statistics) at its own rate; no launch.
  const DecodeShape one_long{1, 32768, 32, 8, 128, 16};
  REQUIRE(decode_launch(h100, p, one_long).splits == 64);
  const double cta = 5e-6 + 2 * 512 * 128 * 2 / 50e9;
  const double kv = 2.0 * 8 * 32768 * 128 * 2 + 2.0 * 32 * 128 * 2;
  const double body = std::max(kv / (h100.hbm_bandwidth * 0.9), 8 * 64 * cta / 132);
  const double tail = 4.0 * 64 * 130 * 4 / 50e9;
  CHECK(attention_decode(h100, p, DType::kBf16, one_long).time_s == approx(p.launch_overhead_s + body + tail).epsilon(1e-9));
  // CUDA-core paged attention reduces them with a second kernel: at least its launch more.
  DecodeShape paged = one_long;
  paged.kernels = DecodeKernels::kCudaCorePaged;
  CHECK(attention_decode(h100, p, DType::kBf16, paged).time_s >
        attention_decode(h100, p, DType::kBf16, one_long).time_s - tail + p.launch_overhead_s);
  // Without the CTA parameters the stream model is unchanged: the grouped limit does not apply.
  KernelParams plain = KernelParams::defaults_for(h100);
  CHECK(decode_launch(h100, plain, wide).grouped);
}

TEST_CASE("decode: a grouped CTA runs its GQA group's math on the matrix units, one head per K/V row on the vector units") {
  const hw::GpuSpec b200 = catalog_gpu("B200");
  KernelParams p = KernelParams::defaults_for(b200);
  p.vector_efficiency = 0.5, p.matrix_efficiency = 0.6, p.hbm_efficiency = 0.8;
  // 16 sequences of 32768 fp8 tokens, 32 query heads on one KV head (kernels-aic B200: 24.6 us).
  const DecodeShape gqa{16, 32768, 32, 1, 128, 16};
  const KernelCost c = attention_decode(b200, p, DType::kFp8, gqa);
  // The group's 32 heads are two 16-row MMAs: 4 x 16 x 32 x 32768 x 128 FLOPs at the 16-bit
  // matrix rate; on the vector units (fp8 falls back to fp32) it would take ~10x the KV stream.
  const double flops = 4.0 * 16 * 32 * 32768 * 128;
  const double t_matrix = flops / (b200.peak(DType::kBf16) * 0.6);
  const double t_vector = flops / (b200.vector_rate(DType::kFp8) * 0.5);
  const double t_hbm = c.bytes / (b200.hbm_bandwidth * 0.8);
  REQUIRE(t_vector > 2 * t_hbm);
  REQUIRE(t_matrix < t_hbm);
  CHECK(c.bound == Bound::kHbm);
  CHECK(c.time_s < 1.5 * t_hbm);
  // A group of 17 heads pads to 32 MMA rows: the same matrix time as 32 heads.
  KernelParams slow = p;
  slow.matrix_efficiency = 1e-3;  // make the math bind, to see its rows
  const KernelCost g32 = attention_decode(b200, slow, DType::kFp8, gqa);
  const KernelCost g17 = attention_decode(b200, slow, DType::kFp8, {16, 32768, 17, 1, 128, 16});
  CHECK(g32.bound == Bound::kMatrix);
  CHECK(g17.time_s == approx(g32.time_s).epsilon(0.01));
  CHECK(g32.time_s - slow.launch_overhead_s - slow.decode_overhead_for(DType::kFp8) >= flops / (b200.peak(DType::kBf16) * 1e-3));
  // MHA (one query head per K/V head) stays on the vector units.
  const KernelCost mha = attention_decode(b200, slow, DType::kFp8, {16, 32768, 32, 32, 128, 16});
  CHECK(mha.bound != Bound::kMatrix);
}

TEST_CASE("AIConfigurator decode rows that read their cache faster than HBM are left out") {
  const hw::GpuSpec b200 = catalog_gpu("B200");
  KernelSample d;
  d.kind = SampleKind::kAttentionDecode, d.batch = 64, d.context = 4096, d.heads = 64, d.kv_heads = 2, d.head_dim = 128;
  d.dtype = d.cache_dtype = DType::kFp8;
  const double bytes = 64.0 * 4096 * 2 * 128 * 2 * 1;  // K and V of every cached token, 1 byte each
  d.time_s = 1.5 * bytes / b200.hbm_bandwidth;  // at two thirds of the HBM peak: kept
  CHECK(hbm_fraction(b200, d) == approx(1 / 1.5));
  KernelSample fast = d;
  fast.time_s = 0.5 * bytes / b200.hbm_bandwidth;  // twice the peak (B200 / GB200 rows reach 1.79x)
  CHECK(hbm_fraction(b200, fast) == approx(2.0));
  KernelSample windowed = fast;
  windowed.window = 1024;  // reads a quarter of the cache: within the peak again
  CHECK(hbm_fraction(b200, windowed) == approx(0.5));
  KernelSample prefill = fast;
  prefill.kind = SampleKind::kAttentionPrefill;
  CHECK(hbm_fraction(b200, prefill) == 0);
  std::vector<KernelSample> rows{d, fast, windowed, prefill};
  CHECK(drop_faster_than_hbm(b200, rows).decode == 1);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].time_s == d.time_s);
  CHECK(rows[1].window == 1024);
  CHECK(rows[2].kind == SampleKind::kAttentionPrefill);
}
