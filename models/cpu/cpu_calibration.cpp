#include "models/cpu/cpu_calibration.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "hw/error.hpp"
#include "hw/units.hpp"
#include "models/cpu/cpu_gemm_model.hpp"
#include "models/cpu/cpu_memory_model.hpp"
#include "models/cpu/nonnegative_least_squares.hpp"

namespace exasim::models {

namespace {

using hw::Measurement;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// Weight of the pull towards the spec defaults, relative to one measurement's relative residual:
// small enough that data decides wherever it exists, large enough that a term the data cannot see
// (L1 bandwidth behind a fork/join of microseconds, say) stays at its default instead of drifting.
constexpr double kPriorWeight = 0.01;
// Relative residual at which a measurement starts to count as disturbed (robust fit scale).
constexpr double kRobustScale = 0.1;
// Bounds that keep noise from producing physically impossible values: no level delivers more
// than four times the bandwidth its spec default derives from cycle-level limits and Little's
// law (turbo clocks, wider ports and deeper miss queues than the defaults assume stay within
// that), and no GEMM runs faster than 1.5x the SIMD peak at the base clock.
constexpr double kBandwidthHeadroom = 4.0;
constexpr double kMaxGemmEfficiency = 1.5;

struct Indexed {
  const Measurement* m;
  std::size_t index;  // in profile.measurements, for error messages
};

double shape_value(const Indexed& s, const char* key, const std::string& source) {
  const auto it = s.m->shape.find(key);
  if (it == s.m->shape.end()) {
    throw ConfigError("missing required field", {source, 0, "measurements[" + std::to_string(s.index) + "].shape." + key},
                      "exasim-bench writes it for suite " + s.m->suite);
  }
  return it->second;
}

DType dtype_of(const Indexed& s, const std::string& source) {
  const auto d = dtype_from_name(s.m->dtype);
  if (!d) {
    throw ConfigError("unknown dtype \"" + s.m->dtype + "\"", {source, 0, "measurements[" + std::to_string(s.index) + "].dtype"},
                      "expected fp64, fp32, fp16 or bf16");
  }
  return *d;
}

// ---- memory-bound samples (STREAM and memcpy) ------------------------------------------------

struct StreamSample {
  double read = 0, write = 0, working_set = 0, time = 0;
  int threads = 1;
};

StreamSample stream_sample(const Indexed& s, const std::string& source) {
  StreamSample x;
  x.time = s.m->time_s.min;
  x.threads = std::max(1, s.m->threads);
  x.working_set = s.m->working_set_bytes > 0 ? s.m->working_set_bytes : s.m->bytes;
  if (s.m->suite == "memcpy") {  // bytes counts each byte read and written: 2 x size
    x.read = x.write = s.m->bytes / 2;
    return x;
  }
  const double bytes_per_array = shape_value(s, "elements", source) * 8;  // STREAM arrays are fp64
  x.read = bytes_per_array * shape_value(s, "arrays_read", source);
  x.write = bytes_per_array * shape_value(s, "arrays_written", source);
  return x;
}

// Unknowns of one thread group: [overhead, 1/read bandwidth by level (4), 1/write bandwidth (4)].
struct GroupFit {
  VectorXd x;
  double cost = 0;
};

// The samples of one thread group: one thread, or all of them.
std::vector<const StreamSample*> group_samples(const CpuParams& p, const std::vector<StreamSample>& samples, bool all) {
  std::vector<const StreamSample*> use;
  for (const auto& s : samples) {
    if ((s.threads == 1) != !all || (all && s.threads != p.all_threads)) continue;
    use.push_back(&s);
  }
  return use;
}

GroupFit fit_stream_group(const CpuParams& p, const std::vector<StreamSample>& samples, bool all) {
  const std::vector<const StreamSample*> use = group_samples(p, samples, all);
  const auto n = static_cast<Eigen::Index>(use.size());
  MatrixXd a = MatrixXd::Zero(n + 8, 9);
  VectorXd b = VectorXd::Ones(n + 8);
  const int threads = all ? p.all_threads : 1;
  for (Eigen::Index r = 0; r < n; ++r) {
    const StreamSample& s = *use[static_cast<std::size_t>(r)];
    const std::array<double, 4> f = level_fractions(p, s.working_set, threads);
    a(r, 0) = 1;
    for (int i = 0; i < 4; ++i) {
      a(r, 1 + i) = f[static_cast<std::size_t>(i)] * s.read;
      a(r, 5 + i) = f[static_cast<std::size_t>(i)] * s.write;
    }
    a.row(r) /= s.time;
  }
  const auto& prior = all ? p.all_cores : p.one_core;
  VectorXd lower = VectorXd::Zero(9);
  for (int i = 0; i < 4; ++i) {
    const LevelBandwidth bw = prior[static_cast<std::size_t>(i)];
    a(n + i, 1 + i) = kPriorWeight * bw.read;
    a(n + 4 + i, 5 + i) = kPriorWeight * bw.write;
    b[n + i] = b[n + 4 + i] = kPriorWeight;
    lower[1 + i] = 1 / (kBandwidthHeadroom * bw.read);
    lower[5 + i] = 1 / (kBandwidthHeadroom * bw.write);
  }
  const RobustFit fit = robust_bounded_least_squares(a, b, lower, n, kRobustScale);
  return {fit.x, fit.cost};
}

void apply_stream_group(CpuParams& p, const VectorXd& x, bool all) {
  auto& bw = all ? p.all_cores : p.one_core;
  for (std::size_t i = 0; i < 4; ++i) {
    const auto e = static_cast<Eigen::Index>(i);
    if (x[1 + e] > 0) bw[i].read = 1 / x[1 + e];  // zero: the data cannot see it; keep the prior
    if (x[5 + e] > 0) bw[i].write = 1 / x[5 + e];
  }
}

// Fits both thread groups for the capacities in `p`; with `apply`, stores the result in `p`.
double fit_stream(CpuParams& p, const std::vector<StreamSample>& samples, bool apply) {
  const CpuParams prior = p;
  const GroupFit one = fit_stream_group(prior, samples, false);
  const GroupFit all = fit_stream_group(prior, samples, true);
  if (apply) {
    apply_stream_group(p, one.x, false);
    apply_stream_group(p, all.x, true);
    p.loop_overhead_s = one.x[0];
    p.fork_join_s = std::max(0.0, all.x[0] - one.x[0]);
  }
  return one.cost + all.cost;
}

// Read-only bandwidth by level for one thread group, the capacities and overheads already fitted
// on STREAM: unknowns [1/read-only bandwidth by level (4)], pulled towards the group's `read`.
void fit_read_only_group(CpuParams& p, const std::vector<StreamSample>& samples, bool all) {
  const std::vector<const StreamSample*> use = group_samples(p, samples, all);
  if (use.empty()) return;  // read_only stays 0: `read` is used
  const auto n = static_cast<Eigen::Index>(use.size());
  const int threads = all ? p.all_threads : 1;
  const double overhead = p.loop_overhead_s + (all ? p.fork_join_s : 0.0);
  MatrixXd a = MatrixXd::Zero(n + 4, 4);
  VectorXd b = VectorXd::Ones(n + 4);
  for (Eigen::Index r = 0; r < n; ++r) {
    const StreamSample& s = *use[static_cast<std::size_t>(r)];
    const std::array<double, 4> f = level_fractions(p, s.working_set, threads);
    for (int i = 0; i < 4; ++i) a(r, i) = f[static_cast<std::size_t>(i)] * s.read / s.time;
    b[r] = 1 - overhead / s.time;
  }
  auto& bw = all ? p.all_cores : p.one_core;
  VectorXd lower = VectorXd::Zero(4);
  for (int i = 0; i < 4; ++i) {
    const double read = bw[static_cast<std::size_t>(i)].read;
    a(n + i, i) = kPriorWeight * read;
    b[n + i] = kPriorWeight;
    lower[i] = 1 / (kBandwidthHeadroom * read);
  }
  const VectorXd x = robust_bounded_least_squares(a, b, lower, n, kRobustScale).x;
  for (std::size_t i = 0; i < 4; ++i) bw[i].read_only = 1 / x[static_cast<Eigen::Index>(i)];
}

// Coordinate search of the effective capacities (fractions of the reported sizes) and transition
// sharpness of each cache level that minimise `cost`; the fitted values are left in `p` by a
// final call with apply = true.
void search_capacities(CpuParams& p, const std::function<double(CpuParams&, bool)>& cost) {
  const double sharpness[] = {1, 1.5, 2, 3, 4, 6, 8};
  for (int round = 0; round < 3; ++round) {
    for (std::size_t level = 0; level < 3; ++level) {
      double best = cost(p, false);
      CpuParams best_p = p;
      for (double f = 0.05; f <= 1.5001; f += 0.05) {
        for (double s : sharpness) {
          CpuParams trial = p;
          trial.effective_capacity[level] = f;
          trial.sharpness[level] = s;
          const double c = cost(trial, false);
          if (c < best) best = c, best_p = trial;
        }
      }
      p = best_p;
    }
  }
  cost(p, true);
}

// ---- latency ---------------------------------------------------------------------------------

double fit_latency(CpuParams& p, const std::vector<std::pair<double, double>>& samples, bool apply) {
  const auto n = static_cast<Eigen::Index>(samples.size());
  MatrixXd a = MatrixXd::Zero(n + 4, 4);
  VectorXd b = VectorXd::Ones(n + 4);
  for (Eigen::Index r = 0; r < n; ++r) {
    const auto [ws, t] = samples[static_cast<std::size_t>(r)];
    const std::array<double, 4> f = level_fractions(p, ws, 1);
    for (int i = 0; i < 4; ++i) a(r, i) = f[static_cast<std::size_t>(i)] / t;
  }
  for (int i = 0; i < 4; ++i) {
    a(n + i, i) = kPriorWeight / p.latency_s[static_cast<std::size_t>(i)];
    b[n + i] = kPriorWeight;
  }
  const RobustFit fit = robust_bounded_least_squares(a, b, VectorXd::Zero(4), n, kRobustScale);
  if (apply) {
    for (std::size_t i = 0; i < 4; ++i) {
      if (fit.x[static_cast<Eigen::Index>(i)] > 0) p.latency_s[i] = fit.x[static_cast<Eigen::Index>(i)];
    }
  }
  return fit.cost;
}

// ---- GEMM ------------------------------------------------------------------------------------

struct GemmSample {
  CpuGemmShape shape;
  DType dtype = DType::kFp32;
  int threads = 1;
  double time = 0;
};

// One group (one core, or all cores): unknowns [overhead, 1/efficiency fp32, 1/efficiency fp64,
// packing traffic factor, matrix-vector factor].
void fit_gemm_group(const hw::CpuSpec& spec, CpuParams& p, const std::vector<GemmSample>& samples, bool all) {
  std::vector<std::pair<const GemmSample*, CpuGemmTerms>> use;
  for (const auto& s : samples) {
    const CpuGemmTerms t = cpu_gemm_terms(spec, p, s.shape, s.dtype, s.threads);
    if ((t.threads > 1) == all) use.emplace_back(&s, t);
  }
  if (use.empty()) return;
  CpuGemmParams& g = all ? p.gemm_all_cores : p.gemm_one_core;
  const auto n = static_cast<Eigen::Index>(use.size());
  MatrixXd a = MatrixXd::Zero(n + 4, 5);
  VectorXd b = VectorXd::Ones(n + 4);
  for (Eigen::Index r = 0; r < n; ++r) {
    const auto& [s, t] = use[static_cast<std::size_t>(r)];
    a(r, 0) = 1;
    // A matrix-vector product pays the larger of compute and traffic (cpu_gemm_model.hpp): the
    // one the starting parameters say binds is the one it measures.
    const double compute = t.compute_at_peak_s / cpu_gemm_efficiency(g, s->dtype);
    const bool compute_bound = t.matrix_vector && compute > g.matrix_vector_factor * t.traffic_s;
    if (!t.matrix_vector || compute_bound) a(r, s->dtype == DType::kFp64 ? 2 : 1) = t.compute_at_peak_s;
    if (!compute_bound) a(r, t.matrix_vector ? 4 : 3) = t.traffic_s;
    a.row(r) /= s->time;
  }
  const double prior[4] = {g.efficiency_fp32, g.efficiency_fp64, 1 / g.traffic_factor, 1 / g.matrix_vector_factor};
  for (int i = 0; i < 4; ++i) {
    a(n + i, 1 + i) = kPriorWeight * prior[i];
    b[n + i] = kPriorWeight;
  }
  const VectorXd lower = (VectorXd(5) << 0, 1 / kMaxGemmEfficiency, 1 / kMaxGemmEfficiency, 0, 0).finished();
  const VectorXd x = robust_bounded_least_squares(a, b, lower, n, kRobustScale).x;
  g.overhead_s = x[0];
  g.efficiency_fp32 = 1 / x[1];
  g.efficiency_fp64 = 1 / x[2];
  g.traffic_factor = x[3];
  g.matrix_vector_factor = x[4];
}

// ---- the split and the rows ------------------------------------------------------------------

std::string gemm_label(const Measurement& m) {
  std::ostringstream s;
  s << m.shape.at("m") << "x" << m.shape.at("n") << "x" << m.shape.at("k");
  return s.str();
}

// Alternating split of distinct keys in ascending order: odd positions are checked, except the
// last, so that checked points lie between fitted ones.
template <class Key>
std::set<Key> checked_keys(const std::set<Key>& keys) {
  std::set<Key> out;
  std::size_t i = 0;
  for (const Key& k : keys) {
    if (i % 2 == 1 && i + 1 < keys.size()) out.insert(k);
    ++i;
  }
  return out;
}

// GEMM shapes fall in two families, skinny products (m < 64: decode with a small batch, matrix-
// vector included) and the rest; each is ordered by FLOPs and split alternately on its own, so
// that both regimes, and the smallest and largest products of each, are in the fit.
constexpr double kSkinnyRows = 64;
using GemmKey = std::tuple<bool, double, double, double, double>;  // wide, FLOPs, m, n, k
GemmKey gemm_key(const Indexed& s, const std::string& source) {
  const double m = shape_value(s, "m", source), n = shape_value(s, "n", source), k = shape_value(s, "k", source);
  return {m >= kSkinnyRows, 2 * m * n * k, m, n, k};
}
CpuGemmShape shape_of(const GemmKey& key) { return {std::get<2>(key), std::get<3>(key), std::get<4>(key)}; }

std::set<GemmKey> checked_gemm_keys(const std::set<GemmKey>& keys) {
  std::set<GemmKey> out;
  for (bool wide : {false, true}) {
    std::set<GemmKey> family;
    for (const auto& k : keys) {
      if (std::get<0>(k) == wide) family.insert(k);
    }
    for (const auto& k : checked_keys(family)) out.insert(k);
  }
  return out;
}

struct Split {
  std::vector<Indexed> stream, gemm, latency, memcpy;
  std::set<GemmKey> gemm_checked;
  std::set<double> latency_checked;
  std::set<double> read_checked;  // working sets of the read kernel held out
};

// STREAM's triad is held out whole (its bandwidths come from copy, scale and add); the read-only
// kernel has no other kernel to stand for it, so every other size of it is held out.
bool stream_checked(const Split& s, const Measurement& m) {
  return m.op == "triad" || (m.op == "read" && s.read_checked.count(m.working_set_bytes) > 0);
}

Split split(const hw::Profile& profile, int device, const std::string& source) {
  Split s;
  for (std::size_t i = 0; i < profile.measurements.size(); ++i) {
    const Measurement& m = profile.measurements[i];
    if (m.device != device) continue;
    const Indexed x{&m, i};
    if (m.suite == "stream") s.stream.push_back(x);
    else if (m.suite == "gemm") s.gemm.push_back(x);
    else if (m.suite == "latency") s.latency.push_back(x);
    else if (m.suite == "memcpy" && m.op == "host") s.memcpy.push_back(x);
  }
  std::set<GemmKey> shapes;
  for (const auto& g : s.gemm) shapes.insert(gemm_key(g, source));
  s.gemm_checked = checked_gemm_keys(shapes);
  std::set<double> sizes;
  for (const auto& l : s.latency) sizes.insert(l.m->working_set_bytes);
  s.latency_checked = checked_keys(sizes);
  std::set<double> read_sizes;
  for (const auto& x : s.stream) {
    if (x.m->op == "read") read_sizes.insert(x.m->working_set_bytes);
  }
  s.read_checked = checked_keys(read_sizes);
  return s;
}

void require(bool ok, const std::string& what, const std::string& source) {
  if (!ok) {
    throw ConfigError("the profile has no " + what + " measurements of this CPU", {source, 0, "measurements"},
                      "run exasim-bench with the stream and gemm suites (e.g. exasim-bench --quick)");
  }
}

CpuFitRow row_of(const Measurement& m, bool check) {
  CpuFitRow r;
  r.suite = m.suite;
  r.op = m.op;
  r.dtype = m.dtype;
  r.threads = std::max(1, m.threads);
  r.measured_s = m.time_s.min;
  r.check = check;
  r.work = m.suite == "gemm" ? m.flops : m.bytes;
  r.shape = m.suite == "gemm" ? gemm_label(m) : units::format(m.working_set_bytes, units::Dimension::kBytes, 3);
  return r;
}

}  // namespace

hw::CpuSpec cpu_spec_from_profile(const hw::ProfileDevice& d) {
  hw::CpuSpec s;
  s.name = d.name;
  s.vendor = "measured";
  s.cores = std::max(1, static_cast<int>(std::lround(d.compute_units)));
  s.base_clock_hz = d.clock_hz > 0 ? d.clock_hz : 2e9;
  const auto simd = d.extra.find("simd_width_bits");
  s.simd_width_bits = simd != d.extra.end() ? static_cast<int>(simd->second) : 128;
  s.fma_units_per_core = 2;
  const auto l3 = d.extra.find("l3_bytes");
  s.l3_bytes = l3 != d.extra.end() ? l3->second : 0;
  s.memory_bandwidth = 0;  // unknown until measured: the DRAM fit supplies it
  return s;
}

namespace {

// Defaults from the spec, with the cache sizes and thread count the profile reports.
CpuParams starting_params(const hw::CpuSpec& spec, const hw::ProfileDevice& device, const std::string& source) {
  CpuParams p = CpuParams::defaults_for(spec);
  auto extra = [&](const char* key, double fallback) {
    const auto it = device.extra.find(key);
    return it != device.extra.end() && it->second > 0 ? it->second : fallback;
  };
  p.l1d_bytes = extra("l1d_bytes", p.l1d_bytes);
  p.l2_bytes = device.l2_bytes > 0 ? device.l2_bytes : p.l2_bytes;
  p.l3_bytes = extra("l3_bytes", p.l3_bytes);
  p.all_threads = static_cast<int>(extra("threads", spec.cores));
  p.source = "calibrated: " + source;
  return p;
}

// The fit, on the fit set only: memory levels first (GEMM traffic is timed through them).
void fit_all(const hw::CpuSpec& spec, CpuParams& p, const Split& sp, const std::string& source) {
  std::vector<StreamSample> stream_fit, read_fit;
  for (const auto& s : sp.stream) {
    if (stream_checked(sp, *s.m)) continue;
    (s.m->op == "read" ? read_fit : stream_fit).push_back(stream_sample(s, source));
  }
  search_capacities(p, [&](CpuParams& q, bool apply) { return fit_stream(q, stream_fit, apply); });
  fit_read_only_group(p, read_fit, false);
  fit_read_only_group(p, read_fit, true);
  std::vector<std::pair<double, double>> latency_fit;
  for (const auto& s : sp.latency) {
    if (!sp.latency_checked.count(s.m->working_set_bytes)) latency_fit.emplace_back(s.m->working_set_bytes, s.m->time_s.min);
  }
  if (!latency_fit.empty()) fit_latency(p, latency_fit, true);
  std::vector<GemmSample> gemm_fit;
  for (const auto& s : sp.gemm) {
    const GemmKey k = gemm_key(s, source);
    if (sp.gemm_checked.count(k)) continue;
    gemm_fit.push_back({shape_of(k), dtype_of(s, source), std::max(1, s.m->threads),
                        s.m->time_s.min});
  }
  fit_gemm_group(spec, p, gemm_fit, false);
  fit_gemm_group(spec, p, gemm_fit, true);
}

// Every measurement, fitted or checked, predicted by the model functions themselves.
std::vector<CpuFitRow> predict_all(const hw::CpuSpec& spec, const CpuParams& p, const Split& sp, const std::string& source) {
  std::vector<CpuFitRow> rows;
  for (const auto& s : sp.stream) {
    const StreamSample x = stream_sample(s, source);
    CpuFitRow r = row_of(*s.m, stream_checked(sp, *s.m));
    r.predicted_s = s.m->op == "read" ? cpu_read_only_stream_time(p, x.read, x.working_set, x.threads)
                                      : cpu_stream_time(p, x.read, x.write, x.working_set, x.threads);
    rows.push_back(r);
  }
  for (const auto& s : sp.gemm) {
    const GemmKey k = gemm_key(s, source);
    CpuFitRow r = row_of(*s.m, sp.gemm_checked.count(k) > 0);
    r.predicted_s = cpu_gemm_time(spec, p, shape_of(k), dtype_of(s, source), r.threads);
    rows.push_back(r);
  }
  for (const auto& s : sp.latency) {
    CpuFitRow r = row_of(*s.m, sp.latency_checked.count(s.m->working_set_bytes) > 0);
    r.predicted_s = cpu_access_latency(p, s.m->working_set_bytes);
    rows.push_back(r);
  }
  for (const auto& s : sp.memcpy) {
    const StreamSample x = stream_sample(s, source);
    CpuFitRow r = row_of(*s.m, true);
    r.predicted_s = cpu_stream_time(p, x.read, x.write, x.working_set, x.threads);
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

CpuCalibration calibrate_cpu(const hw::Profile& profile, const hw::ProfileDevice& device, const hw::CpuSpec& spec,
                             const std::string& source) {
  const Split sp = split(profile, device.index, source);
  require(!sp.stream.empty(), "STREAM", source);
  require(!sp.gemm.empty(), "GEMM", source);
  CpuCalibration c;
  c.spec = spec;
  if (c.spec.memory_bandwidth <= 0) c.spec.memory_bandwidth = 100e9;  // only seeds the DRAM prior
  c.params = starting_params(c.spec, device, source);
  fit_all(c.spec, c.params, sp, source);
  c.rows = predict_all(c.spec, c.params, sp, source);
  c.spec.memory_bandwidth = c.params.all_cores[3].read;  // what STREAM reached on all cores
  return c;
}

CpuErrorSummary summarize(const std::vector<CpuFitRow>& rows, const std::string& suite, bool check,
                          const std::string& op, int threads) {
  std::vector<double> e;
  for (const auto& r : rows) {
    if (r.suite != suite || r.check != check || (!op.empty() && r.op != op) || (threads > 0 && r.threads != threads)) continue;
    e.push_back(std::abs(r.error()));
  }
  CpuErrorSummary s;
  s.count = static_cast<int>(e.size());
  if (e.empty()) return s;
  std::sort(e.begin(), e.end());
  s.median = e.size() % 2 ? e[e.size() / 2] : 0.5 * (e[e.size() / 2 - 1] + e[e.size() / 2]);
  s.max = e.back();
  return s;
}

}  // namespace exasim::models
