#include "models/calibration/kernel_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <tuple>

#include "hw/error.hpp"
#include "models/calibration/calibration_file.hpp"
#include "models/kernel/roofline.hpp"

namespace exasim::models {

namespace {

// The samples of one kind; attention's are GQA's (`mla` false) or MLA's, which have parameters
// of their own and a stage of their own.
std::vector<KernelSample> of_kind(const std::vector<KernelSample>& s, SampleKind kind, bool mla = false) {
  std::vector<KernelSample> out;
  for (const KernelSample& x : s)
    if (x.kind == kind && x.mla == mla) out.push_back(x);
  return out;
}

// The power limit's parameters: fitted only on GEMMs that show the limit (kernel_sample.hpp
// SampleClocks): the sustained clocks where some ran under it (power-limited or sustained), the
// window where some ran into it (power-limited).
bool is_power_limit_parameter(const std::string& name) {
  return name == "sustained_clock_fraction" || name == "power_window";
}

bool shown_by(const std::string& name, bool power_limited, bool sustained) {
  if (name == "power_window") return power_limited;
  if (name == "sustained_clock_fraction") return power_limited || sustained;
  return true;
}

}  // namespace

std::vector<KernelSample> spread_subset(const std::vector<KernelSample>& s, std::size_t limit, unsigned seed) {
  if (limit == 0 || s.size() <= limit) return s;
  std::vector<std::size_t> order(s.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(limit);
  std::sort(order.begin(), order.end());
  std::vector<KernelSample> out;
  out.reserve(limit);
  for (std::size_t i : order) out.push_back(s[i]);
  return out;
}

bool shape_held_out(double n, double k, double fraction, unsigned seed) {
  if (fraction <= 0) return false;
  // splitmix64 of the pair: a fixed, platform-independent hash (std::hash is not).
  std::uint64_t z = static_cast<std::uint64_t>(n) * 0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(k) + seed * 0xBF58476D1CE4E5B9ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 < fraction;
}

bool sample_held_out(const KernelSample& s, double fraction, unsigned seed) {
  switch (s.kind) {
    case SampleKind::kGemm: return shape_held_out(s.n, s.k, fraction, seed);
    case SampleKind::kAttentionPrefill:
    case SampleKind::kAttentionDecode:  // a model's attention geometry, as a new model would bring
      return shape_held_out(s.heads * 1024 + s.kv_heads, s.head_dim * 1048576 + s.window, fraction, seed);
    case SampleKind::kMoeExperts:  // a model's expert geometry
      return shape_held_out(s.moe.hidden * 1048576 + s.moe.expert_ffn, s.moe.experts * 64 + s.moe.top_k, fraction, seed);
    case SampleKind::kMemoryOp: return false;
  }
  return false;
}

std::vector<std::string> gemm_parameters_for(const std::vector<KernelSample>& gemms) {
  bool wide = false, fp8 = false, fp4 = false, int8 = false, block = false, weight_only = false;
  bool power_limited = false, sustained = false;
  bool casts[kCastKernels] = {};
  for (const KernelSample& g : gemms) {
    if (g.kind != SampleKind::kGemm) continue;
    if (g.clocks == SampleClocks::kPowerLimited) power_limited = true;
    if (g.clocks == SampleClocks::kSustained) sustained = true;
    if (g.cast != InputCast::kNone) casts[cast_kernel(g.cast, g.dtype)] = true;
    if (g.recipe == GemmRecipe::kWeightOnly) weight_only = true;
    else if (g.recipe == GemmRecipe::kBlockScaled) block = true;
    else if (g.dtype == DType::kFp8) fp8 = true;
    else if (g.dtype == DType::kFp4) fp4 = true;
    else if (g.dtype == DType::kInt8) int8 = true;
    else wide = true;
  }
  std::vector<std::string> names;
  for (const std::string& n : gemm_parameter_names())
    if ((n != "matrix_efficiency" || wide) && shown_by(n, power_limited, sustained)) names.push_back(n);
  if (fp8) names.emplace_back("matrix_efficiency_fp8");
  if (fp4) names.emplace_back("matrix_efficiency_fp4");
  if (int8) names.emplace_back("matrix_efficiency_int8");
  if (block) names.emplace_back("matrix_efficiency_block_fp8");
  if (weight_only) names.emplace_back("matrix_efficiency_weight_only"), names.emplace_back("weight_only_overhead");
  for (int i = 0; i < kCastKernels; ++i)
    if (casts[i])
      for (const char* what : {"cast_overhead.", "cast_efficiency."}) names.push_back(what + std::string(cast_kernel_name(i)));
  return names;
}

bool shows_scale_alignment_copy(const std::vector<KernelSample>& gemms) {
  std::map<std::tuple<double, double, double, double>, double> block;  // (m, n, k, batch) -> time
  for (const KernelSample& g : gemms)
    if (g.kind == SampleKind::kGemm && g.recipe == GemmRecipe::kBlockScaled && g.k > 128 && g.m >= 4 && g.m <= 13)
      block[{g.m, g.n, g.k, g.batch}] = g.time_s;
  std::vector<double> steps;
  for (const auto& [shape, t] : block) {
    const auto [m, n, k, batch] = shape;
    if (std::fmod(m, 4) != 0) continue;
    if (auto next = block.find({m + 1, n, k, batch}); next != block.end()) steps.push_back(next->second - t);
  }
  if (steps.size() < 10) return false;
  std::nth_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2), steps.end());
  return steps[steps.size() / 2] > 1e-6;
}

void resolve_format_efficiencies(KernelParams& p) {
  p.matrix_efficiency_fp8 = p.matrix_efficiency_for(DType::kFp8);
  p.matrix_efficiency_fp4 = p.matrix_efficiency_for(DType::kFp4);
  p.matrix_efficiency_int8 = p.matrix_efficiency_for(DType::kInt8);
  p.matrix_efficiency_block_fp8 = p.matrix_efficiency_for(DType::kFp8, GemmRecipe::kBlockScaled);
  p.matrix_efficiency_weight_only = p.matrix_efficiency_for(DType::kInt8, GemmRecipe::kWeightOnly);
  for (int i = 0; i < kCastKernels; ++i) p.cast_efficiency[static_cast<std::size_t>(i)] = p.cast_efficiency_for(i);
  // A fixed cost fitted in log space needs a start in its range, not 0.
  if (p.weight_only_overhead_s <= 0) p.weight_only_overhead_s = 2e-6;
}

const std::vector<std::string>& gemm_parameter_names() {
  static const std::vector<std::string> kNames = {"matrix_efficiency",       "hbm_efficiency", "l2_efficiency",
                                                  "launch_overhead",         "tile_overhead",  "loaded_latency_factor",
                                                  "sustained_clock_fraction", "power_window"};
  return kNames;
}

const std::vector<std::string>& roofline_parameter_names() {
  static const std::vector<std::string> kNames = {"matrix_efficiency", "hbm_efficiency", "launch_overhead"};
  return kNames;
}

SamplePredictor roofline_predictor(const hw::GpuSpec& gpu) {
  return [&gpu](const KernelParams& p, const KernelSample& s) {
    if (s.kind == SampleKind::kGemm) return gemm(gpu, p, s.dtype, s.m, s.n, s.k, s.batch).time_s;
    const MemoryTraffic t = memory_op_traffic(s.memory_op, s.dtype, s.rows, s.cols);
    return memory_bound(gpu, p, t.bytes, t.flops).time_s;
  };
}

KernelParams datasheet_params() {
  KernelParams p;
  p.matrix_efficiency = p.vector_efficiency = p.hbm_efficiency = 1;
  p.launch_overhead_s = 0;
  p.source = "datasheet roofline";
  return p;
}

KernelCalibration calibrate_kernels(const hw::GpuSpec& gpu, const std::vector<KernelSample>& samples,
                                    const KernelCalibrationOptions& o) {
  KernelCalibration c;
  c.uncalibrated = KernelParams::microbenchmark_defaults(gpu);
  c.family = KernelParams::defaults_for(gpu);
  std::set<std::string> sources;
  for (const KernelSample& s : samples) sources.insert(s.source);
  for (const std::string& f : o.fit_sources) {
    if (!sources.contains(f)) {
      std::string known;
      for (const std::string& s : sources) known += (known.empty() ? "" : ", ") + s;
      throw ConfigError("no measurements from \"" + f + "\"", {"<command line>", 0, "--fit"}, "sources: " + known);
    }
  }
  for (const KernelSample& s : samples) {
    const bool fit = (o.fit_sources.empty() ||
                      std::find(o.fit_sources.begin(), o.fit_sources.end(), s.source) != o.fit_sources.end()) &&
                     !sample_held_out(s, o.held_out_shapes, o.split_seed);
    (fit ? c.fit_set : c.held_out).push_back(s);
  }
  if (c.fit_set.empty())
    throw ConfigError("no measurements in the fit set (" + std::to_string(samples.size()) + " read, all held out)", {},
                      "hold fewer out (--held-out-shapes) or fit more sources (--fit)");
  auto require = [&](const std::string& what, std::size_t n, std::size_t parameters) {
    require_samples_for_fit(what, n, parameters, o.samples_per_parameter);
  };
  const SamplePredictor tile = tile_model_predictor(gpu);
  auto start = [](double& v, double at) { v = v > 0 ? v : at; };  // log-space fits need a start in range
  const std::vector<KernelSample> all_gemms = of_kind(c.fit_set, SampleKind::kGemm);
  const std::vector<KernelSample> gemms = spread_subset(all_gemms, o.max_fit_gemms, o.split_seed);
  // Prefill attention: the main loop's efficiency and the framework op's fixed costs.
  std::vector<std::string> prefill_names = {"attention_efficiency", "attention_overhead.prefill", "attention_cta_overhead",
                                            "attention_cta_bandwidth"};
  const std::vector<KernelSample> all_prefills = of_kind(c.fit_set, SampleKind::kAttentionPrefill);
  const std::vector<KernelSample> prefills = spread_subset(all_prefills, o.max_fit_gemms, o.split_seed);
  KernelParams p = c.family;
  if (!prefills.empty()) {
    if (std::any_of(prefills.begin(), prefills.end(), [](const KernelSample& s) { return s.dtype == DType::kFp8; })) {
      prefill_names.emplace_back("attention_efficiency_fp8");
      if (p.attention_efficiency_fp8 <= 0) p.attention_efficiency_fp8 = p.attention_efficiency;
    }
    require("prefill attention calls", all_prefills.size(), prefill_names.size());
    start(p.attention_overhead_s[0], 5e-6), start(p.attention_cta_overhead_s, 2e-6), start(p.attention_cta_bandwidth, 50e9);
  }
  if (!gemms.empty()) {
    std::vector<std::string> names = gemm_parameters_for(gemms);
    if (shows_scale_alignment_copy(all_gemms)) names.emplace_back("scale_align_overhead"), start(p.scale_align_overhead_s, 5e-6);
    require("GEMMs", gemms.size(), names.size());
    resolve_format_efficiencies(p);
    if (o.library_behaviours) p.smem_operand_mma = p.stream_k = p.narrow_output_16bit = 1;
    const bool limit_fitted = std::any_of(names.begin(), names.end(), is_power_limit_parameter);
    // The L2 read rate is the GPU's: GEMMs and prefill attention both stream their tiles through
    // it, so where both were measured they are fitted together. Alone, the GEMMs of B200 and
    // GB200 fit as well with an L2 bound at 54% and tensor cores at 100% as the other way round,
    // and the L2-bound choice made prefill attention 14-18% off where 13% fits (kernels-aic).
    std::vector<KernelSample> fitted_on = gemms;
    if (!prefills.empty()) {
      names.insert(names.end(), prefill_names.begin(), prefill_names.end());
      fitted_on.insert(fitted_on.end(), prefills.begin(), prefills.end());
    }
    // The sustained clocks are the GPU's, shown by prefill attention at the limit as well (B200:
    // power in the attention tables, none in the GEMM table).
    const bool prefill_at_limit = std::any_of(prefills.begin(), prefills.end(), [](const KernelSample& s) {
      return s.clocks != SampleClocks::kBurst;
    });
    if (prefill_at_limit && std::find(names.begin(), names.end(), "sustained_clock_fraction") == names.end())
      names.emplace_back("sustained_clock_fraction");
    // Every sample at burst clocks: the power limit is not fitted and stays the family's, and the
    // fit runs on burst parameters, which predict_sample would otherwise copy for every sample.
    const bool burst = !limit_fitted && !prefill_at_limit;
    if (burst) p = p.at_burst_clocks();
    const KernelFit f = fit_kernel_params(p, names, fitted_on, tile, o.fit);
    p = f.params;
    if (burst) p.sustained_clock_fraction = c.family.sustained_clock_fraction;
    c.fitted_names = names;
    if (o.library_behaviours)
      for (const char* n : {"smem_operand_mma", "stream_k", "narrow_output_16bit"}) c.fitted_names.emplace_back(n);
    KernelFitOptions roof = o.fit;
    c.roofline = fit_kernel_params(c.family, roofline_parameter_names(), gemms, roofline_predictor(gpu), roof).params;
    c.roofline.source = "three-number roofline fitted to the same GEMMs";
  } else if (!prefills.empty()) {
    p = fit_kernel_params(p, prefill_names, prefills, tile, o.fit).params;
    c.fitted_names.insert(c.fitted_names.end(), prefill_names.begin(), prefill_names.end());
  }
  // Memory ops: the efficiency and launch cost of every op that was measured.
  const std::vector<KernelSample> mem = of_kind(c.fit_set, SampleKind::kMemoryOp);
  std::vector<std::string> mem_names;
  for (const KernelSample& s : mem) {
    const std::string op(memory_op_name(s.memory_op));
    for (const std::string& n : {"memory_op_efficiency." + op, "memory_op_overhead." + op})
      if (std::find(mem_names.begin(), mem_names.end(), n) == mem_names.end()) mem_names.push_back(n);
  }
  if (!mem.empty()) {
    require("memory-bound ops", mem.size(), mem_names.size());
    // Start every op from the shared defaults so that the fit moves them from there.
    for (std::size_t i = 0; i < kMemoryOpCount; ++i) {
      if (p.memory_op_efficiency_by_op[i] == 0) p.memory_op_efficiency_by_op[i] = p.memory_op_efficiency;
      if (p.memory_op_overhead_by_op[i] == 0) p.memory_op_overhead_by_op[i] = p.memory_op_overhead_s;
    }
    const KernelFit f = fit_kernel_params(p, mem_names, mem, tile, o.fit);
    p = f.params;
    // Ops that were not measured go back to "use the shared default".
    for (std::size_t i = 0; i < kMemoryOpCount; ++i) {
      const std::string op(memory_op_name(static_cast<MemoryOp>(i)));
      if (std::find(mem_names.begin(), mem_names.end(), "memory_op_efficiency." + op) == mem_names.end())
        p.memory_op_efficiency_by_op[i] = 0, p.memory_op_overhead_by_op[i] = 0;
    }
    c.fitted_names.insert(c.fitted_names.end(), mem_names.begin(), mem_names.end());
  }
  // Decode attention, on top of those: the KV stream's efficiency, the op's fixed cost and the
  // CTAs' costs and bandwidth, each per cache dtype present.
  std::vector<std::string> decode_names = {"attention_decode_efficiency", "attention_overhead.decode",
                                           "decode_cta_overhead.bf16", "decode_head_cta_overhead",
                                           "decode_cta_bandwidth.bf16"};
  const std::vector<KernelSample> decodes = of_kind(c.fit_set, SampleKind::kAttentionDecode);
  if (!decodes.empty()) {
    const bool fp8_cache =
        std::any_of(decodes.begin(), decodes.end(), [](const KernelSample& s) { return s.dtype == DType::kFp8; });
    if (fp8_cache)
      for (const char* n : {"attention_overhead.decode_fp8", "decode_cta_overhead.fp8", "decode_cta_bandwidth.fp8"})
        decode_names.emplace_back(n);
    require("decode attention calls", decodes.size(), decode_names.size());
    start(p.attention_overhead_s[1], 5e-6), start(p.decode_cta_overhead_s[0], 2e-6);
    start(p.decode_head_cta_overhead_s, 1e-6), start(p.decode_cta_bandwidth[0], 50e9);
    start(p.attention_decode_efficiency, p.hbm_efficiency);
    if (fp8_cache) {
      start(p.attention_overhead_s[2], 5e-6), start(p.decode_cta_overhead_s[1], 2e-6);
      start(p.decode_cta_bandwidth[1], p.decode_cta_bandwidth[0]);
    }
    // TensorRT-LLM's XQA serves GQA groups of up to 32 query heads per CTA; larger groups run
    // its per-head MMHA (kernels-aic, 2048 sequences of 2 tokens: 128 heads on 4 KV heads
    // 458 us on H100, on 2 KV heads, group 64, 2426 us; the same split on A100, GB200, L40S).
    if (o.library_behaviours) p.decode_group_limit = 32;
    p = fit_kernel_params(p, decode_names, spread_subset(decodes, o.max_fit_gemms, o.split_seed), tile, o.fit).params;
    c.fitted_names.insert(c.fitted_names.end(), decode_names.begin(), decode_names.end());
    if (p.decode_group_limit > 0) c.fitted_names.emplace_back("decode_group_limit");
  }
  // Multi-head latent attention (kernels-aic's MLA tables), on top of attention: its kernels' own
  // efficiency and the op's fixed cost, prefill and decode apart; the shapes and everything else
  // as for attention.
  for (const SampleKind kind : {SampleKind::kAttentionPrefill, SampleKind::kAttentionDecode}) {
    const std::vector<KernelSample> mla = of_kind(c.fit_set, kind, true);
    if (mla.empty()) continue;
    const bool prefill = kind == SampleKind::kAttentionPrefill;
    std::vector<std::string> names = prefill ? std::vector<std::string>{"mla_prefill_efficiency", "mla_overhead.prefill"}
                                             : std::vector<std::string>{"mla_decode_efficiency", "mla_overhead.decode"};
    // With the CTA model (fitted on GQA's decode), MLA decode's CTAs get their own rate.
    if (!prefill && p.decode_cta_bandwidth[0] > 0) names.emplace_back("mla_decode_cta_bandwidth");
    // Where an fp8 cache runs the context FMHA in fp8, its own efficiency.
    const bool fp8_prefill = prefill && std::any_of(mla.begin(), mla.end(), [&](const KernelSample& s) {
                               return mla_prefill_runs_fp8(gpu, s.dtype);
                             });
    if (fp8_prefill) names.emplace_back("mla_prefill_efficiency_fp8");
    // With GQA's CTA model fitted, the MLA context kernel's CTAs get their own cost and rate.
    const bool cta_model = prefill && p.attention_cta_overhead_s > 0 && p.attention_cta_bandwidth > 0;
    if (cta_model) names.insert(names.end(), {"mla_prefill_cta_overhead", "mla_prefill_cta_bandwidth"});
    require(prefill ? "MLA prefill calls" : "MLA decode calls", mla.size(), names.size());
    const std::vector<KernelSample> subset = spread_subset(mla, o.max_fit_gemms, o.split_seed);
    if (prefill) {
      start(p.mla_prefill_efficiency, p.attention_efficiency), start(p.mla_overhead_s[0], 10e-6);
      if (fp8_prefill)
        start(p.mla_prefill_efficiency_fp8, p.attention_efficiency_fp8 > 0 ? p.attention_efficiency_fp8 : p.mla_prefill_efficiency);
      if (cta_model)
        start(p.mla_prefill_cta_overhead_s, p.attention_cta_overhead_s), start(p.mla_prefill_cta_bandwidth, p.attention_cta_bandwidth);
      p = fit_kernel_params(p, names, subset, tile, o.fit).params;
    } else {
      start(p.mla_decode_efficiency, p.attention_decode_efficiency > 0 ? p.attention_decode_efficiency : p.hbm_efficiency);
      start(p.mla_overhead_s[1], 10e-6), start(p.mla_decode_cta_bandwidth, p.decode_cta_bandwidth[0]);
      // Split-KV or one CTA per sequence: a library's behaviour (as the GQA group limit is). Split,
      // as every current decode kernel does, unless one CTA per sequence fits clearly better (a
      // fifth less error): B200's fit came out 1% better with one CTA at an unbounded CTA rate,
      // which is split-KV's HBM-bound time in another form; A100's and L40S's by more than half.
      KernelParams split = p, single = p;
      single.mla_decode_single_cta = 1;
      split = fit_kernel_params(split, names, subset, tile, o.fit).params;
      single = fit_kernel_params(single, names, subset, tile, o.fit).params;
      p = mean_abs_error(single, subset, tile) < 0.8 * mean_abs_error(split, subset, tile) ? single : split;
      if (p.mla_decode_single_cta > 0) names.emplace_back("mla_decode_single_cta");
    }
    c.fitted_names.insert(c.fitted_names.end(), names.begin(), names.end());
  }
  // MoE layers, on top of everything else: the token-permute kernels' bandwidth and, by format,
  // the grouped GEMMs' matrix and HBM efficiency and the op's fixed cost (the activation and
  // routing are the parts fitted above). On the balanced rows only: their load per rank is exact;
  // the skewed rows (their busiest rank is a model too) are predicted. The bandwidth on the 16-bit
  // rows, with that format's values (no cast or low-precision GEMM runs beside the permutes); then
  // each low-precision format on its own rows, the permutes as fitted.
  std::array<std::vector<KernelSample>, 4> moes_by_slot;
  for (const KernelSample& s : of_kind(c.fit_set, SampleKind::kMoeExperts))
    if (s.op.ends_with(" balanced"))
      moes_by_slot[static_cast<std::size_t>(KernelParams::moe_gemm_slot(s.dtype, s.recipe))].push_back(s);
  for (std::size_t i = 0; i < moes_by_slot.size(); ++i) {  // the 16-bit slot (0) first
    const std::vector<KernelSample>& moes = moes_by_slot[i];
    if (moes.empty()) continue;
    const std::string slot_name(KernelParams::kMoeGemmSlotNames[i]);
    std::vector<std::string> moe_names = {"moe_gemm_efficiency." + slot_name, "moe_gemm_hbm_efficiency." + slot_name,
                                          "moe_op_overhead." + slot_name};
    if (i == KernelParams::kMoeGemmBf16)
      moe_names.insert(moe_names.begin(), "gather_efficiency"), start(p.gather_efficiency, p.memory_op_efficiency);
    start(p.moe_gemm_efficiency[i], p.matrix_efficiency_for(moes.front().dtype, moes.front().recipe));
    start(p.moe_gemm_hbm_efficiency[i], p.hbm_efficiency);
    start(p.moe_op_overhead_s[i], 5e-6);
    require("MoE layers", moes.size(), moe_names.size());
    p = fit_kernel_params(p, moe_names, spread_subset(moes, o.max_fit_gemms, o.split_seed), tile, o.fit).params;
    c.fitted_names.insert(c.fitted_names.end(), moe_names.begin(), moe_names.end());
  }
  // What was fitted is what its file gives every command that reads it (written precision), and
  // what the errors here and in the file's header are of.
  c.fitted = kernel_params_as_written(c.family, p, c.fitted_names);
  const auto error_of = [&](SampleKind kind) { return mean_abs_error(c.fitted, of_kind(c.fit_set, kind), tile); };
  c.gemm_fit_error = error_of(SampleKind::kGemm), c.memory_fit_error = error_of(SampleKind::kMemoryOp);
  c.prefill_fit_error = error_of(SampleKind::kAttentionPrefill), c.decode_fit_error = error_of(SampleKind::kAttentionDecode);
  return c;
}

}  // namespace exasim::models
