#include "models/calibration/kernel_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "hw/error.hpp"

namespace exasim::models {

namespace {

struct Bounds {
  double lo, hi;
};

Bounds bounds_of(ParamKind kind) {
  switch (kind) {
    case ParamKind::kFraction: return {0.05, 1.0};
    case ParamKind::kTime: return {1e-8, 1e-3};
    case ParamKind::kBytes: return {1024, 16 * 1048576.0};
    case ParamKind::kFactor: return {1.0, 4.0};  // loaded latency: at most 4x idle (queueing at ~75% load)
    case ParamKind::kSwitch: return {1e-9, 1.0};  // switches are set, not fitted
    case ParamKind::kBandwidth: return {1e9, 2e12};  // one CTA's loads: 1 GB/s .. a whole HBM stack
    case ParamKind::kCount: return {1, 1024};        // set, not fitted
  }
  return {0, 0};
}

std::vector<NamedParam> select(KernelParams& p, const std::vector<std::string>& names) {
  const std::vector<NamedParam> all = named_params(p);
  std::vector<NamedParam> out;
  for (const std::string& name : names) {
    bool found = false;
    for (const NamedParam& np : all) {
      if (np.name == name) out.push_back(np), found = true;
    }
    if (!found) {
      std::string known;
      for (const NamedParam& np : all) known += (known.empty() ? "" : ", ") + np.name;
      throw ConfigError("unknown kernel parameter \"" + name + "\"", {"", 0, "fit"}, "known: " + known);
    }
  }
  return out;
}

// The fit in log space of the free parameters: residuals log(predicted / measured), optionally
// weighted, and the absolute-error cost that ranks candidates.
class LogFit {
 public:
  LogFit(KernelParams& work, std::vector<NamedParam> free, const std::vector<KernelSample>& samples,
         const SamplePredictor& predict)
      : work_(work), free_(std::move(free)), samples_(samples), predict_(predict),
        weight_(Eigen::VectorXd::Ones(static_cast<Eigen::Index>(samples.size()))) {}

  Eigen::Index size() const { return static_cast<Eigen::Index>(free_.size()); }
  void set(const Eigen::VectorXd& v) const {
    for (Eigen::Index i = 0; i < size(); ++i) *free_[static_cast<std::size_t>(i)].value = std::exp(v[i]);
  }
  void raw(const Eigen::VectorXd& v, Eigen::VectorXd& r) const {
    set(v);
    r.resize(static_cast<Eigen::Index>(samples_.size()));
    for (std::size_t s = 0; s < samples_.size(); ++s)
      r[static_cast<Eigen::Index>(s)] = std::log(predict_(work_, samples_[s]) / samples_[s].time_s);
  }
  ResidualFunction weighted() const {
    return [this](const Eigen::VectorXd& v, Eigen::VectorXd& r) {
      raw(v, r);
      r.array() *= weight_.array();
    };
  }
  double abs_cost(const Eigen::VectorXd& v) const {
    Eigen::VectorXd r;
    raw(v, r);
    return r.cwiseAbs().sum();
  }
  // Iteratively reweighted least squares: w^2 = 1 / max(|r|, 1%) turns sum r^2 into ~sum |r|.
  void reweight(const Eigen::VectorXd& v) {
    Eigen::VectorXd r;
    raw(v, r);
    weight_ = r.cwiseAbs().cwiseMax(0.01).cwiseInverse().cwiseSqrt();
  }
  void unweight() { weight_.setOnes(); }

 private:
  KernelParams& work_;
  std::vector<NamedParam> free_;
  const std::vector<KernelSample>& samples_;
  const SamplePredictor& predict_;
  Eigen::VectorXd weight_;
};

// Starting points: x0, then a Latin hypercube over [x0 - log 3, x0 + log 3] within the bounds,
// ranked by absolute error. Deterministic: a fixed-seed generator.
std::vector<std::pair<double, Eigen::VectorXd>> ranked_starts(const LogFit& f, const Eigen::VectorXd& x0,
                                                              const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
                                                              const KernelFitOptions& o) {
  std::vector<std::pair<double, Eigen::VectorXd>> starts = {{f.abs_cost(x0), x0}};
  std::mt19937 rng(o.seed);
  std::vector<std::vector<int>> strata(static_cast<std::size_t>(x0.size()));
  for (auto& s : strata) {
    s.resize(static_cast<std::size_t>(o.samples));
    std::iota(s.begin(), s.end(), 0);
    std::shuffle(s.begin(), s.end(), rng);
  }
  std::uniform_real_distribution<double> unit(0, 1);
  for (int j = 0; j < o.samples; ++j) {
    Eigen::VectorXd v = x0;
    for (Eigen::Index i = 0; i < x0.size(); ++i) {
      const double u = (strata[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] + unit(rng)) / o.samples;
      v[i] = std::clamp(x0[i] + std::log(3.0) * (2 * u - 1), lo[i], hi[i]);
    }
    starts.emplace_back(f.abs_cost(v), v);
  }
  std::stable_sort(starts.begin(), starts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return starts;
}

}  // namespace

KernelFit fit_kernel_params(KernelParams start, const std::vector<std::string>& names,
                            const std::vector<KernelSample>& samples, const SamplePredictor& predict,
                            const KernelFitOptions& options) {
  KernelFit fit;
  fit.params = std::move(start);
  fit.fitted = names;
  if (samples.empty() || names.empty()) return fit;
  KernelParams work = fit.params;
  std::vector<NamedParam> free = select(work, names);
  const auto n = static_cast<Eigen::Index>(free.size());
  Eigen::VectorXd x0(n), lo(n), hi(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Bounds b = bounds_of(free[static_cast<std::size_t>(i)].kind);
    lo[i] = std::log(b.lo), hi[i] = std::log(b.hi);
    x0[i] = std::log(std::clamp(*free[static_cast<std::size_t>(i)].value, b.lo, b.hi));
  }
  LogFit f(work, std::move(free), samples, predict);
  const auto starts = ranked_starts(f, x0, lo, hi, options);
  // Plain least squares from the best starting points; the best result by absolute error is
  // then reweighted towards least absolute error.
  double best_cost = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best = x0;
  const int runs = std::min<int>(std::max(1, options.local_fits), static_cast<int>(starts.size()));
  for (int run = 0; run < runs; ++run) {
    Eigen::VectorXd x = starts[static_cast<std::size_t>(run)].second;
    const LeastSquaresReport rep = levenberg_marquardt(x, lo, hi, f.weighted(), options.least_squares);
    const double c = f.abs_cost(x);
    if (c < best_cost) best_cost = c, best = x, fit.report = rep;
  }
  for (int round = 0; round < options.robust_rounds; ++round) {
    f.reweight(best);
    Eigen::VectorXd x = best;
    levenberg_marquardt(x, lo, hi, f.weighted(), options.least_squares);
    f.unweight();
    const double c = f.abs_cost(x);
    if (c < best_cost) best_cost = c, best = x;
  }
  f.set(best);
  work.source = fit.params.source;
  fit.params = work;
  fit.mean_abs_error = mean_abs_error(fit.params, samples, predict);
  return fit;
}

std::vector<std::string> parameters_at_bounds(const KernelParams& p, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  KernelParams copy = p;
  for (const NamedParam& np : named_params(copy)) {
    if (std::find(names.begin(), names.end(), np.name) == names.end()) continue;
    if (np.kind == ParamKind::kSwitch || np.kind == ParamKind::kCount) continue;
    const Bounds b = bounds_of(np.kind);
    const double v = *np.value;
    if (v > 0 && std::abs(std::log(v / b.hi)) < 0.005) out.push_back(np.name + " (upper)");
    else if (v > 0 && std::abs(std::log(v / b.lo)) < 0.005) out.push_back(np.name + " (lower)");
  }
  return out;
}

SamplePredictor tile_model_predictor(const hw::GpuSpec& gpu) {
  return [&gpu](const KernelParams& p, const KernelSample& s) { return predict_sample(gpu, p, s); };
}

double mean_abs_error(const KernelParams& p, const std::vector<KernelSample>& samples, const SamplePredictor& predict) {
  if (samples.empty()) return 0;
  double sum = 0;
  for (const KernelSample& s : samples) sum += std::abs(predict(p, s) / s.time_s - 1);
  return sum / static_cast<double>(samples.size());
}

}  // namespace exasim::models
