// NVIDIA AIConfigurator GEMM tables (kernels-aic): the reader on a committed slice and on malformed
// tables, the split that holds out whole (n, k) shapes, the GEMM formats and the input casts the
// table's ops run, fitted back from data the model generated, and leave-one-GPU-out on two GPUs
// generated from one parameter set.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <set>
#include <string_view>
#include <utility>

#include "hw/error.hpp"
#include "kernel_test_gpus.hpp"
#include "located_error.hpp"
#include "models/calibration/aic_gemm_table.hpp"
#include "models/calibration/kernel_calibration.hpp"
#include "models/calibration/leave_one_gpu_out.hpp"
#include "models/kernel/gemm_model.hpp"

using namespace exasim;
using namespace exasim::models;
using exasim::testing::approx;
using exasim::testing::catalog_gpu;

namespace {

const std::string kData = std::string(EXASIM_TEST_DATA) + "/kernels-aic";

// Samples of the table's formats on shapes from decode to training, timed by the model.
std::vector<KernelSample> synthetic_formats(const hw::GpuSpec& gpu, const KernelParams& truth, const std::string& source) {
  struct Format {
    const char* op;
    DType dtype;
    GemmRecipe recipe;
    InputCast cast;
  };
  const Format formats[] = {{"bfloat16", DType::kBf16, GemmRecipe::kDense, InputCast::kNone},
                            {"fp8", DType::kFp8, GemmRecipe::kDense, InputCast::kPerTensor},
                            {"fp8_block", DType::kFp8, GemmRecipe::kBlockScaled, InputCast::kPerGroup}};
  std::vector<KernelSample> out;
  for (const Format& f : formats)
    for (double m : {1.0, 32.0, 256.0, 1024.0, 4096.0, 32768.0})
      for (double n : {32.0, 1024.0, 4096.0, 16384.0})
        for (double k : {1024.0, 8192.0}) {
          KernelSample s;
          s.kind = SampleKind::kGemm, s.op = f.op, s.source = source, s.m = m, s.n = n, s.k = k, s.tokens = m;
          s.dtype = f.dtype, s.recipe = f.recipe, s.cast = f.cast, s.timing = SampleTiming::kKernel;
          s.time_s = predict_sample(gpu, truth, s);
          out.push_back(s);
        }
  return out;
}

}  // namespace

TEST_CASE("AIConfigurator GEMM table: formats, casts, kernel timing, empty calls left out") {
  const std::string path = kData + "/h100_sxm/gemm_perf.csv";
  REQUIRE(is_aic_gemm_table(path));
  CHECK_FALSE(is_aic_gemm_table(std::string(EXASIM_TEST_DATA) + "/vidur/a100_meta-llama_llama-2-7b-hf_ops.csv"));
  CHECK(aic_table_gpu(path) == "H100-SXM5-80GB");
  const AicGemmTable t = read_aic_gemm_table(path);
  CHECK(t.empty_rows == 2);  // the m = 0 rows of bfloat16 and fp8_block
  REQUIRE(t.samples.size() == 18);
  const KernelSample& first = t.samples.front();  // bfloat16,4096,4096,4096,0.1800554593404134
  CHECK(first.op == "bfloat16");
  CHECK(first.dtype == DType::kBf16);
  CHECK(first.recipe == GemmRecipe::kDense);
  CHECK(first.cast == InputCast::kNone);
  CHECK(first.timing == SampleTiming::kKernel);
  CHECK(first.source == "h100_sxm");
  CHECK(first.line == 2);
  CHECK(first.m == 4096);
  CHECK(first.time_s == approx(180.0554593404134e-6).epsilon(1e-12));
  CHECK(t.samples[1].cast == InputCast::kPerTensor);  // fp8: dynamic per-tensor scale
  CHECK(t.samples[2].recipe == GemmRecipe::kBlockScaled);
  CHECK(t.samples[2].cast == InputCast::kPerGroup);
}

TEST_CASE("AIConfigurator GEMM table: a malformed row is refused with its file, line and column") {
  auto error_of = [](const std::string& file) {
    return exasim::testing::located_error([&] { read_aic_gemm_table(kData + "/bad/" + file); });
  };
  const auto not_number = error_of("gemm_perf.csv");
  CHECK(not_number.first == 3);
  CHECK(not_number.second == "k: \"x4096\" is not a number (fix or drop the row)");
  const auto unknown = error_of("unknown_dtype.csv");
  CHECK(unknown.first == 3);
  CHECK(unknown.second.find("unknown gemm_dtype \"fp6\"") != std::string::npos);
  CHECK(unknown.second.find("nvfp4") != std::string::npos);  // the known ones are listed
  const auto missing = error_of("missing_k.csv");
  CHECK(missing.first == 1);
  CHECK(missing.second.find("missing column \"k\"") != std::string::npos);
  CHECK_THROWS_AS(read_aic_gemm_table(kData + "/bad/absent.csv"), IoError);
  // What the reader cannot use is refused too, not read as nothing (a fit on 0 GEMMs) or as a
  // GEMM no kernel can run.
  exasim::testing::check_refusals(
      error_of, {{"gemm_huge_m.csv", 3, "m: implausible m 99999999999999999999 (one kernel call indexes at most 2^31 - 1"},
                 {"gemm_fractional_m.csv", 2, "m: \"16.5\" is not a whole number"},
                 {"gemm_extra_field.csv", 3, ": 6 fields where the header names 5 (remove the extra field"},
                 {"header_only.csv", 1, ": no GEMM to fit (rows with a zero dimension: 0)"},
                 {"gemm_zero_m.csv", 2, ": no GEMM to fit (rows with a zero dimension: 1)"}});
}

TEST_CASE("shape split: whole (n, k) pairs are held out, the same for every m and dtype, at the fraction asked") {
  int held = 0, total = 0;
  for (double n = 32; n <= 65536; n *= 2)
    for (double k = 32; k <= 65536; k *= 2) {
      ++total;
      held += shape_held_out(n, k, 0.25, 1) ? 1 : 0;
      CHECK(shape_held_out(n, k, 0.25, 1) == shape_held_out(n, k, 0.25, 1));
      CHECK_FALSE(shape_held_out(n, k, 0.0, 1));
    }
  CHECK(held > total / 8);  // 0.25 of 121 pairs: not none, not all
  CHECK(held < total / 2);
  // A calibration with the split never fits a held-out pair, whatever its m.
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelCalibrationOptions o;
  o.held_out_shapes = 0.5;
  o.samples_per_parameter = 0;  // ~9 GEMMs for 12 parameters: the split is what is tested
  o.fit.samples = 0, o.fit.local_fits = 1, o.fit.robust_rounds = 0;
  const KernelCalibration c = calibrate_kernels(h100, read_aic_gemm_table(kData + "/h100_sxm/gemm_perf.csv").samples, o);
  std::set<std::pair<double, double>> fitted, held_out;
  for (const auto& s : c.fit_set) fitted.insert({s.n, s.k});
  for (const auto& s : c.held_out) held_out.insert({s.n, s.k});
  for (const auto& nk : held_out) CHECK_FALSE(fitted.contains(nk));
  CHECK(c.fit_set.size() + c.held_out.size() == 18);
}

TEST_CASE("GEMM fit: too few measurements for its parameters is refused with the counts") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  const std::vector<KernelSample> slice = read_aic_gemm_table(kData + "/h100_sxm/gemm_perf.csv").samples;
  REQUIRE(slice.size() == 18);
  // 6 shared (no power limit: the table ran at burst clocks), 2 formats, 2 casts x 2
  const std::size_t parameters = gemm_parameters_for(slice).size();
  CHECK(parameters == 12);
  KernelCalibrationOptions o;
  o.fit.samples = 0, o.fit.local_fits = 1, o.fit.robust_rounds = 0;
  CHECK_THROWS_WITH_AS(calibrate_kernels(h100, slice, o),
                       "too few GEMMs to fit 12 parameters: 18 in the fit set, at least 24 needed", ConfigError);
  o.samples_per_parameter = 1;  // 18 >= 12: fitted
  CHECK(calibrate_kernels(h100, slice, o).fit_set.size() == 18);
  CHECK_THROWS_WITH_AS(require_samples_for_fit("decode attention calls", 0, 3), doctest::Contains("0 in the fit set, at least 6"),
                       ConfigError);
}

TEST_CASE("input casts: bytes by hand, a dynamic per-tensor scale reads the input twice") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams p = KernelParams::defaults_for(h100);
  const double rows = 8192, cols = 8192, x = rows * cols;
  const KernelCost stat = input_cast(h100, p, InputCast::kStatic, DType::kFp8, rows, cols);
  const KernelCost tensor = input_cast(h100, p, InputCast::kPerTensor, DType::kFp8, rows, cols);
  const KernelCost group = input_cast(h100, p, InputCast::kPerGroup, DType::kFp8, rows, cols);
  const KernelCost fp4 = input_cast(h100, p, InputCast::kPerGroup, DType::kFp4, rows, cols);
  CHECK(stat.bytes == approx(x * (2 + 1) + 4));
  CHECK(tensor.bytes == approx(x * (2 * 2 + 1) + 4));
  CHECK(group.bytes == approx(x * (2 + 1) + x / 128 * 4));
  CHECK(fp4.bytes == approx(x * (2 + 0.5) + x / 16));
  CHECK(input_cast(h100, p, InputCast::kNone, DType::kFp8, rows, cols).time_s == 0);
  // 201 MB at the memory ops' bandwidth, plus the kind's fixed cost.
  CHECK(stat.time_s == approx(stat.bytes / (h100.hbm_bandwidth * p.memory_op_efficiency) + p.cast_overhead_s[0]).epsilon(0.01));
  // A kind with its own efficiency streams at it: the per-tensor cast at 42% of 3.35 TB/s.
  KernelParams slow = p;
  slow.cast_efficiency[1] = 0.42;
  CHECK(input_cast(h100, slow, InputCast::kPerTensor, DType::kFp8, rows, cols).time_s ==
        approx(tensor.bytes / (h100.hbm_bandwidth * 0.42) + p.cast_overhead_s[1]).epsilon(0.01));
  CHECK(input_cast(h100, slow, InputCast::kStatic, DType::kFp8, rows, cols).time_s == stat.time_s);  // others unchanged
  // The per-group casts to 8 and to 4 bits are different kernels, each with its own parameters.
  CHECK(cast_kernel(InputCast::kPerGroup, DType::kFp8) == 2);
  CHECK(cast_kernel(InputCast::kPerGroup, DType::kInt8) == 2);
  CHECK(cast_kernel(InputCast::kPerGroup, DType::kFp4) == 3);
  CHECK(cast_kernel_name(3) == "per_group_fp4");
  slow.cast_efficiency[3] = 0.9, slow.cast_overhead_s[3] = 1e-6;
  CHECK(input_cast(h100, slow, InputCast::kPerGroup, DType::kFp4, rows, cols).time_s ==
        approx(fp4.bytes / (h100.hbm_bandwidth * 0.9) + 1e-6).epsilon(0.01));
  CHECK(input_cast(h100, slow, InputCast::kPerGroup, DType::kFp8, rows, cols).time_s == group.time_s);
}

TEST_CASE("GEMM rows that read their operands faster than HBM are left out: the replays found them in L2") {
  const hw::GpuSpec l40s = catalog_gpu("L40S");
  // L40S's table: 8 x 8192 x 3072 bf16 in 27.4 us, 48 MiB of weights at 1.84 TB/s (GDDR6: 864 GB/s).
  KernelSample warm;
  warm.kind = SampleKind::kGemm, warm.dtype = DType::kBf16, warm.m = 8, warm.n = 8192, warm.k = 3072;
  warm.time_s = 27.4e-6;
  const double bytes = 8.0 * 3072 * 2 + 3072.0 * 8192 * 2;  // A and B read once; C not counted
  CHECK(hbm_fraction(l40s, warm) == approx(bytes / 27.4e-6 / l40s.hbm_bandwidth));
  CHECK(hbm_fraction(l40s, warm) > 2);
  KernelSample cold = warm;
  cold.n = 4096, cold.k = 7168, cold.time_s = 84.8e-6;  // 56 MiB at 692 GB/s: from GDDR6
  CHECK(hbm_fraction(l40s, cold) == approx(0.80).epsilon(0.01));
  // An fp8 op casts its bf16 input: A counts at 2 bytes, B at 1.
  KernelSample fp8 = cold;
  fp8.dtype = DType::kFp8, fp8.cast = InputCast::kPerTensor;
  CHECK(hbm_fraction(l40s, fp8) == approx((8.0 * 7168 * 2 + 7168.0 * 4096) / 84.8e-6 / l40s.hbm_bandwidth));
  std::vector<KernelSample> rows{warm, cold, fp8};
  const FasterThanHbm dropped = drop_faster_than_hbm(l40s, rows);
  CHECK(dropped.gemm == 1);
  CHECK(dropped.decode == 0);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].k == 7168);
}

TEST_CASE("Block-scaled fp8 casts copy their scales into a TMA-aligned layout only where the library must") {
  const hw::GpuSpec gb200 = catalog_gpu("GB200");
  KernelParams p = KernelParams::defaults_for(gb200);
  auto cast = [&](double rows, double cols) { return input_cast(gb200, p, InputCast::kPerGroup, DType::kFp8, rows, cols); };
  // 0 (the default): the quantize kernel writes the aligned layout; 5 rows cost what 4 do, per row.
  CHECK(cast(5, 4096).time_s == approx(cast(4, 4096).time_s).epsilon(0.01));
  p.scale_align_overhead_s = 8e-6;
  const double efficiency = p.cast_efficiency_for(cast_kernel(InputCast::kPerGroup, DType::kFp8));
  // By hand: 32771 rows of 65536 values hold 32771 x 512 fp32 scales (67 MB), read and written
  // once more: bandwidth-bound.
  const double scale_bytes = 32771.0 * 65536 / 128 * 4;
  KernelParams off = p;
  off.scale_align_overhead_s = 0;
  const KernelCost aligned = input_cast(gb200, off, InputCast::kPerGroup, DType::kFp8, 32771, 65536);
  const KernelCost copied = cast(32771, 65536);
  CHECK(copied.bytes == approx(aligned.bytes + 2 * scale_bytes));
  CHECK(copied.time_s == approx(aligned.time_s + 8e-6 + 2 * scale_bytes / (gb200.hbm_bandwidth * efficiency)).epsilon(0.01));
  CHECK(cast(4096, 4096).time_s == approx(input_cast(gb200, off, InputCast::kPerGroup, DType::kFp8, 4096, 4096).time_s));
  // One scale per row (k = 128): no column stride to align; and neither the fp4 nor the int8 cast does it.
  CHECK(cast(4099, 128).time_s == approx(input_cast(gb200, off, InputCast::kPerGroup, DType::kFp8, 4099, 128).time_s));
  CHECK(input_cast(gb200, p, InputCast::kPerGroup, DType::kFp4, 4099, 4096).time_s ==
        input_cast(gb200, off, InputCast::kPerGroup, DType::kFp4, 4099, 4096).time_s);
  CHECK(input_cast(gb200, p, InputCast::kPerGroup, DType::kInt8, 4099, 4096).time_s ==
        input_cast(gb200, off, InputCast::kPerGroup, DType::kInt8, 4099, 4096).time_s);
}

TEST_CASE("The fit looks for the scale copy in the table: 4 -> 5 rows costing more than timing noise") {
  auto table = [](double step_s) {
    std::vector<KernelSample> s;
    for (double n : {512.0, 1024.0, 2048.0, 4096.0})
      for (double k : {128.0, 256.0, 1024.0, 8192.0})
        for (double m : {4.0, 5.0, 8.0, 9.0, 12.0, 13.0}) {
          KernelSample g;
          g.kind = SampleKind::kGemm, g.dtype = DType::kFp8, g.recipe = GemmRecipe::kBlockScaled;
          g.m = m, g.n = n, g.k = k;
          g.time_s = 10e-6 + (std::fmod(m, 4) != 0 && k > 128 ? step_s : 0.1e-6 * (m / 4));
          s.push_back(g);
        }
    return s;
  };
  CHECK(shows_scale_alignment_copy(table(6e-6)));     // GB200's table: +6 us
  CHECK_FALSE(shows_scale_alignment_copy(table(0.2e-6)));  // H100's: noise
  std::vector<KernelSample> few = table(6e-6);
  few.resize(12);  // pairs of one (n, k) only: too few to say
  CHECK_FALSE(shows_scale_alignment_copy(few));
}

TEST_CASE("GEMM formats: a table's name, or a recipe or cast name with the operands' dtype, names one op") {
  auto name_of = [](std::string_view name, DType t) {
    const GemmFormat* f = find_gemm_format(name, t);
    return f ? std::string(f->name) : std::string("none");
  };
  CHECK(name_of("fp8_block", DType::kBf16) == "fp8_block");  // a table name carries its own dtype
  CHECK(name_of("per_tensor", DType::kFp8) == "fp8");
  CHECK(name_of("static", DType::kFp8) == "fp8_static");
  CHECK(name_of("block_scaled", DType::kFp8) == "fp8_block");
  CHECK(name_of("per_group", DType::kFp8) == "fp8_block");
  CHECK(name_of("per_group", DType::kFp4) == "nvfp4");
  CHECK(name_of("per_group", DType::kInt8) == "sq");
  CHECK(name_of("weight_only", DType::kInt8) == "int8_wo");
  CHECK(name_of("weight_only", DType::kInt4) == "int4_wo");
  CHECK(name_of("dense", DType::kBf16) == "bfloat16");
  CHECK(name_of("per_tensor", DType::kBf16) == "none");  // nothing casts to 16 bits
  CHECK(name_of("fp6", DType::kFp8) == "none");
  // The op: the input cast of the [m, k] activations, then the GEMM (the fp8 example).
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  const KernelParams p = KernelParams::defaults_for(h100);
  const KernelCost op = gemm_op(h100, p, *find_gemm_format("fp8", DType::kFp8), 3584, 6144, 768);
  const KernelCost cast = input_cast(h100, p, InputCast::kPerTensor, DType::kFp8, 3584, 768);
  const KernelCost gemm = gemm_time(h100, p, DType::kFp8, 3584, 6144, 768);
  CHECK(op.time_s == approx(cast.time_s + gemm.time_s).epsilon(1e-12));
  CHECK(op.bytes == approx(cast.bytes + gemm.bytes).epsilon(1e-12));
  CHECK(op.flops == approx(cast.flops + gemm.flops).epsilon(1e-12));
  CHECK(cast.time_s > p.cast_overhead_s[1]);
  const KernelCost block = gemm_op(h100, p, *find_gemm_format("fp8_block", DType::kFp8), 3584, 6144, 768);
  CHECK(block.time_s == approx(input_cast(h100, p, InputCast::kPerGroup, DType::kFp8, 3584, 768).time_s +
                               gemm_time(h100, p, DType::kFp8, 3584, 6144, 768, 1, GemmRecipe::kBlockScaled).time_s)
                            .epsilon(1e-12));
}

TEST_CASE("GEMM formats: fp8 writes 16-bit results, weight-only reads narrow weights on the 16-bit path") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  KernelParams p = KernelParams::defaults_for(a100);
  // Decode: weight bytes decide. int4 weights (+ a 16-bit scale per 128) against bf16 ones.
  const double n = 8192, k = 8192;
  const KernelCost bf16 = gemm_time(a100, p, DType::kBf16, 1, n, k);
  const KernelCost int4 = gemm_time(a100, p, DType::kInt4, 1, n, k, 1, GemmRecipe::kWeightOnly);
  CHECK(int4.bytes == approx(k * 2 + k * n * (0.5 + 2.0 / 128) + n * 2));  // weight-only: 16-bit out always
  CHECK(bf16.bytes == approx((k + k * n + n) * 2));
  CHECK(int4.time_s < 0.5 * bf16.time_s);
  // Large: weight-only runs the 16-bit MMAs, so it is no faster than bf16 there; SmoothQuant's
  // int8 MMA is.
  const double big = 8192;
  CHECK(gemm_time(a100, p, DType::kInt8, big, n, k, 1, GemmRecipe::kWeightOnly).time_s >=
        0.95 * gemm_time(a100, p, DType::kBf16, big, n, k).time_s);
  CHECK(gemm_time(a100, p, DType::kInt8, big, n, k).time_s < 0.7 * gemm_time(a100, p, DType::kBf16, big, n, k).time_s);
  // fp8 output: 2 bytes per element where the switch says so (the kernels-aic calibrations).
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  CHECK(gemm_time(h100, p, DType::kFp8, 4096, 4096, 4096).bytes == approx(4096.0 * 4096 * (1 + 1 + 1)));
  p.narrow_output_16bit = 1;
  CHECK(gemm_time(h100, p, DType::kFp8, 4096, 4096, 4096).bytes == approx(4096.0 * 4096 * (1 + 1 + 2)));
}

TEST_CASE("block-scaled GEMMs never split K: one CTA per output tile over the whole of K, as DeepGEMM runs") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams p = KernelParams::defaults_for(h100);
  p.smem_operand_mma = p.stream_k = p.narrow_output_16bit = 1;
  // 1 x 128 x 8192: two 64-wide output tiles for 132 SMs. The per-tensor fp8 GEMM splits K (or
  // runs Stream-K); the block-scaled one streams all 8192 of K in each of its two CTAs, and is
  // slower by what the split saved (H100 table: 13.9 us; with split-K 16 the model said 7.7 us).
  const GemmPlan dense = gemm_plan(h100, p, DType::kFp8, 1, 128, 8192);
  const GemmPlan block = gemm_plan(h100, p, DType::kFp8, 1, 128, 8192, 1, GemmRecipe::kBlockScaled);
  CHECK((dense.split_k > 1 || dense.stream_k));
  CHECK(block.split_k == 1);
  CHECK_FALSE(block.stream_k);
  CHECK(block.cost.time_s > 1.5 * dense.cost.time_s);
  for (const GemmPlan& c : gemm_candidate_plans(h100, p, DType::kFp8, 1, 128, 8192, 1, GemmRecipe::kBlockScaled))
    CHECK((c.split_k == 1 && !c.stream_k));
  // Its time is that of the same tile without a split.
  const GemmPlan same = gemm_plan_with(h100, p, DType::kFp8, 1, 128, 8192, 1, block.tile, 1, GemmRecipe::kBlockScaled);
  CHECK(block.cost.time_s == approx(same.cost.time_s).epsilon(1e-12));
  // NVFP4 on Blackwell (CUTLASS's block-scaled kernels) does not split K either, where bf16 does
  // (kernels-aic B200: 1 x 10240 x 65536 nvfp4 takes 134 us, the weights at 2.8 TB/s; a split-K
  // plan had predicted 82 us).
  const hw::GpuSpec b200 = catalog_gpu("B200");
  KernelParams q = KernelParams::defaults_for(b200);
  q.smem_operand_mma = q.stream_k = q.narrow_output_16bit = 1;
  const GemmPlan wide = gemm_plan(b200, q, DType::kBf16, 1, 1024, 65536);
  CHECK((wide.split_k > 1 || wide.stream_k));
  for (const GemmPlan& c : gemm_candidate_plans(b200, q, DType::kFp4, 1, 1024, 65536))
    CHECK((c.split_k == 1 && !c.stream_k));
}

TEST_CASE("kernel fit: recovers the formats' efficiencies and the casts' fixed costs and bandwidths from data the model generated") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB");
  KernelParams truth = KernelParams::defaults_for(h100);
  truth.matrix_efficiency = 0.84, truth.matrix_efficiency_fp8 = 0.66, truth.matrix_efficiency_block_fp8 = 0.52;
  truth.cast_overhead_s = {2e-6, 11e-6, 3e-6};
  truth.cast_efficiency = {0, 0.42, 0.6};
  // The libraries' behaviours, as calibrate_kernels sets them: without smem_operand_mma a 16-bit
  // Hopper main loop is bound by fragment reads from shared memory, and its matrix efficiency
  // cannot be seen in its times at all.
  truth.smem_operand_mma = truth.stream_k = truth.narrow_output_16bit = 1;
  const std::vector<KernelSample> samples = synthetic_formats(h100, truth, "synthetic");
  const std::vector<std::string> names = gemm_parameters_for(samples);
  CHECK(std::find(names.begin(), names.end(), "matrix_efficiency_block_fp8") != names.end());
  CHECK(std::find(names.begin(), names.end(), "cast_overhead.per_tensor") != names.end());
  CHECK(std::find(names.begin(), names.end(), "cast_efficiency.per_group") != names.end());
  CHECK(std::find(names.begin(), names.end(), "cast_overhead.static") == names.end());  // no static cast here
  CHECK(std::find(names.begin(), names.end(), "cast_efficiency.static") == names.end());
  KernelParams start = KernelParams::defaults_for(h100);
  resolve_format_efficiencies(start);
  start.smem_operand_mma = start.stream_k = start.narrow_output_16bit = 1;
  KernelFitOptions o;
  o.samples = 24, o.local_fits = 8;
  const KernelFit fit = fit_kernel_params(start,
                                          {"matrix_efficiency", "matrix_efficiency_fp8", "matrix_efficiency_block_fp8",
                                           "cast_overhead.per_tensor", "cast_overhead.per_group",
                                           "cast_efficiency.per_tensor", "cast_efficiency.per_group"},
                                          samples, tile_model_predictor(h100), o);
  CHECK(fit.mean_abs_error < 0.01);
  CHECK(fit.params.matrix_efficiency == approx(0.84).epsilon(0.02));
  CHECK(fit.params.matrix_efficiency_fp8 == approx(0.66).epsilon(0.02));
  CHECK(fit.params.matrix_efficiency_block_fp8 == approx(0.52).epsilon(0.02));
  CHECK(fit.params.cast_overhead_s[1] == approx(11e-6).epsilon(0.05));
  CHECK(fit.params.cast_overhead_s[2] == approx(3e-6).epsilon(0.1));
  CHECK(fit.params.cast_efficiency[1] == approx(0.42).epsilon(0.02));
  CHECK(fit.params.cast_efficiency[2] == approx(0.6).epsilon(0.02));
}

TEST_CASE("kernel fit: parameters that ended at a bound of their range are named, switches never") {
  KernelParams p;
  p.matrix_efficiency = 1, p.hbm_efficiency = 0.8, p.loaded_latency_factor = 1, p.power_window_s = 1e-3;
  p.tile_overhead_s = 1.0001e-8, p.stream_k = 1, p.cast_efficiency[3] = 0.0501;
  const std::vector<std::string> names = {"matrix_efficiency", "hbm_efficiency", "loaded_latency_factor", "power_window",
                                          "tile_overhead", "stream_k", "cast_efficiency.per_group_fp4"};
  // In named_params order; hbm_efficiency (0.8) is inside its range, stream_k a switch.
  CHECK(parameters_at_bounds(p, names) ==
        std::vector<std::string>{"matrix_efficiency (upper)", "tile_overhead (lower)", "loaded_latency_factor (lower)",
                                 "power_window (upper)", "cast_efficiency.per_group_fp4 (lower)"});
  // Only the names asked about.
  CHECK(parameters_at_bounds(p, {"hbm_efficiency"}).empty());
}

TEST_CASE("leave one GPU out: two GPUs generated from one parameter set predict each other") {
  const hw::GpuSpec h100 = catalog_gpu("H100-SXM5-80GB"), h200 = catalog_gpu("H200-SXM-141GB");
  KernelParams truth = KernelParams::defaults_for(h100);
  truth.matrix_efficiency = 0.84, truth.matrix_efficiency_fp8 = 0.66, truth.matrix_efficiency_block_fp8 = 0.52;
  truth.hbm_efficiency = 0.82;
  truth.smem_operand_mma = truth.stream_k = truth.narrow_output_16bit = 1;  // as leave_one_gpu_out fits
  std::vector<MeasuredGpu> gpus = {{h100, synthetic_formats(h100, truth, "h100")},
                                   {h200, synthetic_formats(h200, truth, "h200")}};
  LeaveOneOutOptions o;
  o.fit.samples = 8, o.fit.local_fits = 3, o.fit.robust_rounds = 1;
  const std::vector<LeftOutGpu> r = leave_one_gpu_out(gpus, KernelParams::microbenchmark_defaults(h100), o);
  REQUIRE(r.size() == 2);
  for (const LeftOutGpu& g : r) {
    CAPTURE(g.gpu);
    CHECK(g.mean_abs_error < 0.03);  // H200 differs from H100 in HBM only: its datasheet carries that
    CHECK(accuracy_row(g.by_roofline, "all").mae.back() > 5 * g.mean_abs_error);
  }
  gpus.pop_back();
  CHECK_THROWS_AS(leave_one_gpu_out(gpus, truth, o), ConfigError);
}
