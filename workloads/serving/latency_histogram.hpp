#pragma once
// A latency distribution in constant memory: exact count, sum, min and max, and log-spaced bins
// 0.1% wide from 100 ns to 1e5 s, so that percentiles are within 0.05% of the exact value (the
// bin's geometric middle, clamped to [min, max]) however many samples a trace brings.
#include <cstdint>
#include <vector>

namespace exasim::workloads::serving {

struct LatencySummary {
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
};

class LatencyHistogram {
 public:
  LatencyHistogram();
  void add(double seconds);
  std::uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  double min() const { return count_ ? min_ : 0; }
  double max() const { return count_ ? max_ : 0; }
  // Nearest-rank quantile, q in [0, 1].
  double quantile(double q) const;
  LatencySummary summary() const;

 private:
  std::vector<std::uint64_t> bins_;
  std::uint64_t count_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace exasim::workloads::serving
