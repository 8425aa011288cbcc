#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "workloads/serving/latency_histogram.hpp"

TEST_CASE("serving: latency percentiles are within 0.05% of the exact order statistics") {
  exasim::workloads::serving::LatencyHistogram h;
  std::vector<double> v;
  for (int i = 1; i <= 100000; ++i) {
    const double x = 1e-3 * std::exp(std::sin(i * 0.37) * 3);  // spread over decades
    v.push_back(x);
    h.add(x);
  }
  std::sort(v.begin(), v.end());
  for (const double q : {0.5, 0.9, 0.99}) {
    const double exact = v[static_cast<std::size_t>(std::ceil(q * double(v.size()))) - 1];
    CHECK(h.quantile(q) == exasim::testing::approx(exact).epsilon(5e-4));
  }
  double sum = 0;
  for (const double x : v) sum += x;
  CHECK(h.mean() == exasim::testing::approx(sum / double(v.size())).epsilon(1e-12));
  CHECK(h.quantile(1.0) <= v.back());
  CHECK(h.quantile(0.0) >= v.front());
  exasim::workloads::serving::LatencyHistogram same;
  for (int i = 0; i < 10; ++i) same.add(0.25);
  CHECK(same.quantile(0.5) == 0.25);  // clamped to [min, max]: exact for equal samples
}
