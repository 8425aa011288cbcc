#include "models/calibration/expert_all_to_all_fit.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <iterator>

#include "hw/error.hpp"
#include "models/calibration/kernel_calibration.hpp"
#include "models/calibration/least_squares.hpp"

namespace exasim::models {

namespace {

constexpr int kLinear = ExpertAllToAllTerms::kLinear;

// One sample's terms of the formula (expert_all_to_all_terms) and its measured time.
struct Terms {
  std::array<double, kLinear> f;
  double payload_bytes;  // bytes on the links
  int senders;
  double measured;
};

Terms terms_of(const ExpertAllToAllSample& s, int device_sms) {
  const ExpertAllToAllTerms x = expert_all_to_all_terms(s.key, s.exchange, device_sms);
  Terms t;
  std::copy(std::begin(x.linear), std::end(x.linear), t.f.begin());
  t.payload_bytes = x.link_bytes;
  t.senders = x.senders;
  t.measured = s.measured_s;
  return t;
}

double rate_of(const Terms& t, double sm_bandwidth, double link_bandwidth) {
  return std::min(t.senders * sm_bandwidth, link_bandwidth);
}

// Nonnegative least squares of the relative residuals for fixed rates: solve, drop the most
// negative coefficient, solve again (the six costs rarely need more than two passes).
std::array<double, kLinear> linear_costs(const std::vector<Terms>& ts, double sm_bw, double link_bw,
                                         const std::array<bool, kLinear>& used) {
  Eigen::Matrix<double, kLinear, kLinear> ata = Eigen::Matrix<double, kLinear, kLinear>::Zero();
  Eigen::Matrix<double, kLinear, 1> aty = Eigen::Matrix<double, kLinear, 1>::Zero();
  for (const Terms& t : ts) {
    Eigen::Matrix<double, kLinear, 1> a;
    for (int i = 0; i < kLinear; ++i) a(i) = t.f[i] / t.measured;
    const double y = 1 - (t.payload_bytes > 0 ? t.payload_bytes / rate_of(t, sm_bw, link_bw) : 0.0) / t.measured;
    ata += a * a.transpose();
    aty += a * y;
  }
  std::array<bool, kLinear> free = used;
  std::array<double, kLinear> c{};
  for (int pass = 0; pass < kLinear; ++pass) {
    std::vector<int> idx;
    for (int i = 0; i < kLinear; ++i)
      if (free[i] && ata(i, i) > 0) idx.push_back(i);
    c.fill(0);
    if (idx.empty()) break;
    const int n = static_cast<int>(idx.size());
    Eigen::MatrixXd m(n, n);
    Eigen::VectorXd v(n), scale(n);
    for (int i = 0; i < n; ++i) scale(i) = 1 / std::sqrt(ata(idx[i], idx[i]));
    for (int i = 0; i < n; ++i) {
      v(i) = aty(idx[i]) * scale(i);
      for (int j = 0; j < n; ++j) m(i, j) = ata(idx[i], idx[j]) * scale(i) * scale(j);
    }
    const Eigen::VectorXd x = m.completeOrthogonalDecomposition().solve(v);
    int worst = -1;
    for (int i = 0; i < n; ++i) {
      c[idx[i]] = x(i) * scale(i);
      if (c[idx[i]] < 0 && (worst < 0 || c[idx[i]] < c[idx[worst]])) worst = i;
    }
    if (worst < 0) break;
    free[idx[worst]] = false;
  }
  for (double& v : c) v = std::max(0.0, v);
  return c;
}

ExpertAllToAllCosts costs_of(const std::array<double, kLinear>& c, double sm_bw, double link_bw) {
  ExpertAllToAllCosts k;
  k.floor_s = c[0];
  k.expert_s = c[1];
  k.token_s = c[2];
  k.copy_s = c[3];
  k.token_bandwidth = c[4] > 0 ? 1 / c[4] : 0;
  k.row_bandwidth = c[5] > 0 ? 1 / c[5] : 0;
  k.unit_bandwidth = sm_bw;
  k.link_bandwidth = link_bw;
  return k;
}

double error_of(const std::vector<Terms>& ts, const std::array<double, kLinear>& c, double sm_bw, double link_bw) {
  double sum = 0;
  for (const Terms& t : ts) {
    double p = t.payload_bytes > 0 ? t.payload_bytes / rate_of(t, sm_bw, link_bw) : 0.0;
    for (int i = 0; i < kLinear; ++i) p += c[i] * t.f[i];
    sum += std::abs(p / t.measured - 1);
  }
  return sum / static_cast<double>(ts.size());
}

}  // namespace

bool expert_sample_held_out(const ExpertAllToAllSample& s, double fraction, unsigned seed) {
  // The GEMM split's hash (shape_held_out) of the shape packed into two integers.
  const ExpertExchange& x = s.exchange;
  const double shape = static_cast<double>(x.hidden) * 65536 + x.topk;
  const double group = static_cast<double>(x.experts) * 1048576 + (is_deepep(s.key.kernel) ? 0.0 : x.tokens);
  return shape_held_out(shape, group, fraction, seed);
}

double expert_all_to_all_error(const std::vector<ExpertAllToAllSample>& samples, int device_sms,
                               const ExpertAllToAllCosts& costs) {
  if (samples.empty()) return 0;
  double sum = 0;
  for (const ExpertAllToAllSample& s : samples)
    sum += std::abs(expert_all_to_all_time(s.key, s.exchange, device_sms, costs) / s.measured_s - 1);
  return sum / static_cast<double>(samples.size());
}

ExpertAllToAllFit fit_expert_all_to_all(const std::vector<ExpertAllToAllSample>& samples, int device_sms,
                                        double held_out_fraction, unsigned seed) {
  ExpertAllToAllFit fit;
  for (const ExpertAllToAllSample& s : samples) {
    if (s.key != samples.front().key)
      throw ConfigError("an expert all-to-all fit takes one kernel, phase and format", {s.source, s.line, ""},
                        "fit each phase of each kernel apart");
    (expert_sample_held_out(s, held_out_fraction, seed) ? fit.held_out : fit.fit_set).push_back(s);
  }
  if (fit.fit_set.empty()) require_samples_for_fit("expert all-to-all calls", 0, kLinear);
  std::vector<Terms> ts;
  for (const ExpertAllToAllSample& s : fit.fit_set) ts.push_back(terms_of(s, device_sms));
  std::array<bool, kLinear> used;
  used.fill(true);
  // A term the same on every call (the experts, or the row, of a table with one layer shape) would
  // be the floor's: left out.
  for (int i = 1; i < kLinear; ++i)
    used[static_cast<std::size_t>(i)] =
        std::any_of(ts.begin(), ts.end(), [&](const Terms& t) { return t.f[static_cast<std::size_t>(i)] != ts.front().f[static_cast<std::size_t>(i)]; });
  const bool moves_rows = std::any_of(ts.begin(), ts.end(), [](const Terms& t) { return t.payload_bytes > 0; });
  require_samples_for_fit("expert all-to-all calls", fit.fit_set.size(),
                          static_cast<std::size_t>(std::count(used.begin(), used.end(), true)) + (moves_rows ? 2 : 0));
  // The rates on a log grid (4% steps: from 1 GB/s a sender, 50 GB/s-2 TB/s a GPU), then 0.5% and
  // 0.05% steps around the best point.
  double best = INFINITY, best_sm = 0, best_link = 0;
  std::array<double, kLinear> best_c{};
  if (!moves_rows) {  // prepare: no rows, no rates
    fit.costs = costs_of(linear_costs(ts, 1, 1, used), 0, 0);
    return fit;
  }
  auto consider = [&](double sm_bw, double link_bw) {
    const auto c = linear_costs(ts, sm_bw, link_bw, used);
    const double e = error_of(ts, c, sm_bw, link_bw);
    if (e < best) best = e, best_sm = sm_bw, best_link = link_bw, best_c = c;
  };
  // A DeepEP sender is one SM: its loads and stores reach ~100-200 GB/s (64-128 B a clock); an
  // NVLink kernel's is a peer, up to a GPU's whole NVLink.
  const double sender_max = is_deepep(samples.front().key.kernel) ? 200e9 : 1500e9;
  for (double sm = 1e9; sm <= sender_max; sm *= 1.04)
    for (double link = 50e9; link <= 2000e9; link *= 1.04) consider(sm, link);
  for (const double step : {1.005, 1.0005}) {
    const double sm0 = best_sm, link0 = best_link;
    for (int i = -8; i <= 8; ++i)
      for (int j = -8; j <= 8; ++j) consider(sm0 * std::pow(step, i), link0 * std::pow(step, j));
  }
  fit.costs = costs_of(best_c, best_sm, best_link);
  return fit;
}

}  // namespace exasim::models
