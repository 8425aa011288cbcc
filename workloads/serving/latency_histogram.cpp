#include "workloads/serving/latency_histogram.hpp"

#include <algorithm>
#include <cmath>

namespace exasim::workloads::serving {

namespace {

constexpr double kLow = 1e-7;     // s: bin 0 holds everything at or below
constexpr double kHigh = 1e5;     // s: the last bin holds everything above
constexpr double kRatio = 1.001;  // bin width: 0.1%
const double kLogRatio = std::log(kRatio);
const auto kBins = static_cast<std::size_t>(std::ceil(std::log(kHigh / kLow) / kLogRatio)) + 2;

std::size_t bin_of(double v) {
  if (!(v > kLow)) return 0;
  const double i = std::floor(std::log(v / kLow) / kLogRatio) + 1;
  return std::min(kBins - 1, static_cast<std::size_t>(i));
}

// Geometric middle of bin i (bin i >= 1 spans kLow * r^(i-1) .. kLow * r^i).
double middle_of(std::size_t i) {
  if (i == 0) return kLow;
  return kLow * std::exp((static_cast<double>(i) - 0.5) * kLogRatio);
}

}  // namespace

LatencyHistogram::LatencyHistogram() : bins_(kBins, 0) {}

void LatencyHistogram::add(double v) {
  if (count_ == 0) min_ = max_ = v;
  min_ = std::min(min_, v);
  max_ = std::max(max_, v);
  ++count_;
  sum_ += v;
  ++bins_[bin_of(v)];
}

double LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(std::max(1.0, std::ceil(q * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < bins_.size(); ++i) {
    seen += bins_[i];
    if (seen >= rank) return std::clamp(middle_of(i), min_, max_);
  }
  return max_;
}

LatencySummary LatencyHistogram::summary() const { return {mean(), quantile(0.5), quantile(0.9), quantile(0.99)}; }

}  // namespace exasim::workloads::serving
