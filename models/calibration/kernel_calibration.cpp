#include "models/calibration/kernel_calibration.hpp"

#include <algorithm>
#include <set>

#include "hw/error.hpp"
#include "models/kernel/roofline.hpp"

namespace exasim::models {

namespace {

std::vector<KernelSample> of_kind(const std::vector<KernelSample>& s, SampleKind kind) {
  std::vector<KernelSample> out;
  for (const KernelSample& x : s)
    if (x.kind == kind) out.push_back(x);
  return out;
}

}  // namespace

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
    const bool fit = o.fit_sources.empty() ||
                     std::find(o.fit_sources.begin(), o.fit_sources.end(), s.source) != o.fit_sources.end();
    (fit ? c.fit_set : c.held_out).push_back(s);
  }
  const SamplePredictor tile = tile_model_predictor(gpu);
  const std::vector<KernelSample> gemms = of_kind(c.fit_set, SampleKind::kGemm);
  KernelParams p = c.family;
  if (!gemms.empty()) {
    const KernelFit f = fit_kernel_params(p, gemm_parameter_names(), gemms, tile, o.fit);
    p = f.params;
    c.gemm_fit_error = f.mean_abs_error;
    c.fitted_names = gemm_parameter_names();
    KernelFitOptions roof = o.fit;
    c.roofline = fit_kernel_params(c.family, roofline_parameter_names(), gemms, roofline_predictor(gpu), roof).params;
    c.roofline.source = "three-number roofline fitted to the same GEMMs";
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
    // Start every op from the shared defaults so that the fit moves them from there.
    for (std::size_t i = 0; i < kMemoryOpCount; ++i) {
      if (p.memory_op_efficiency_by_op[i] == 0) p.memory_op_efficiency_by_op[i] = p.memory_op_efficiency;
      if (p.memory_op_overhead_by_op[i] == 0) p.memory_op_overhead_by_op[i] = p.memory_op_overhead_s;
    }
    const KernelFit f = fit_kernel_params(p, mem_names, mem, tile, o.fit);
    p = f.params;
    c.memory_fit_error = f.mean_abs_error;
    // Ops that were not measured go back to "use the shared default".
    for (std::size_t i = 0; i < kMemoryOpCount; ++i) {
      const std::string op(memory_op_name(static_cast<MemoryOp>(i)));
      if (std::find(mem_names.begin(), mem_names.end(), "memory_op_efficiency." + op) == mem_names.end())
        p.memory_op_efficiency_by_op[i] = 0, p.memory_op_overhead_by_op[i] = 0;
    }
    c.fitted_names.insert(c.fitted_names.end(), mem_names.begin(), mem_names.end());
  }
  c.fitted = p;
  return c;
}

}  // namespace exasim::models
