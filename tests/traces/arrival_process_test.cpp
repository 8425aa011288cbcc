#include "workloads/serving/arrival_process.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "hw/config/node.hpp"
#include "trace_test_util.hpp"

namespace serving = exasim::workloads::serving;
using serving::Rng;

namespace {

struct GapStats {
  double mean = 0, cv = 0, above_mean = 0;  // above_mean: fraction of gaps longer than the mean
};

GapStats gaps(serving::ArrivalProcess& p, int n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> g;
  double prev = 0;
  for (int i = 0; i < n; ++i) {
    const double t = p.next(rng);
    REQUIRE(t >= prev);
    g.push_back(t - prev);
    prev = t;
  }
  GapStats s;
  for (double x : g) s.mean += x;
  s.mean /= n;
  double var = 0;
  for (double x : g) {
    var += (x - s.mean) * (x - s.mean);
    s.above_mean += x > s.mean ? 1 : 0;
  }
  s.cv = std::sqrt(var / (n - 1)) / s.mean;
  s.above_mean /= n;
  return s;
}

std::vector<double> sequence(serving::ArrivalProcess& p, std::uint64_t seed, int n) {
  Rng rng(seed);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(p.next(rng));
  return out;
}

}  // namespace

// Bounds are about 5 standard errors of each estimate for n = 100k, so a correct sampler fails
// them with negligible probability and the seeds are not tuned.
TEST_CASE("arrivals: Poisson gaps are exponential with mean 1/rate") {
  auto p = serving::poisson_arrivals(8);
  const GapStats s = gaps(*p, 100'000, 1);
  CHECK(std::abs(s.mean - 0.125) < 5 * 0.125 / std::sqrt(1e5));
  CHECK(std::abs(s.cv - 1.0) < 0.03);                      // exponential: sd = mean
  CHECK(std::abs(s.above_mean - std::exp(-1.0)) < 0.008);  // P(X > mean) = 1/e
}

TEST_CASE("arrivals: gamma gaps have the requested coefficient of variation") {
  for (double cv : {0.5, 2.0, 4.0}) {
    CAPTURE(cv);
    auto p = serving::gamma_arrivals(20, cv);
    const GapStats s = gaps(*p, 100'000, 2);
    CHECK(std::abs(s.mean - 0.05) < 5 * 0.05 * cv / std::sqrt(1e5));
    // Relative standard error of sd / mean for gamma gaps (excess kurtosis 6 cv^2), times 5.
    const double rel = 5 * std::sqrt((2 + 6 * cv * cv) / (4 * 1e5) + cv * cv / 1e5);
    CHECK(std::abs(s.cv - cv) < rel * cv);
  }
}

TEST_CASE("arrivals: bursty on/off keeps the mean rate and the interrupted-Poisson variability") {
  // Interrupted Poisson process (Fischer & Meier-Hellstern, "The MMPP cookbook"): with ON rate
  // lambda, ON->OFF rate r1 and OFF->ON rate r2 the gaps are hyperexponential with squared
  // coefficient of variation 1 + 2 lambda r1 / (r1 + r2)^2.
  const double rate = 8, on = 1, off = 1;
  const double lambda = rate * (on + off) / on, r1 = 1 / on, r2 = 1 / off;
  const double scv = 1 + 2 * lambda * r1 / ((r1 + r2) * (r1 + r2));
  auto p = serving::bursty_arrivals(rate, on, off);
  const GapStats s = gaps(*p, 200'000, 3);
  // The IPP is a renewal process (every gap starts in ON), so gaps are independent.
  CHECK(std::abs(s.mean - 1 / rate) < 5 * std::sqrt(scv / 2e5) / rate);
  CHECK(std::abs(s.cv * s.cv - scv) < 0.1 * scv);
}

TEST_CASE("arrivals: offline puts every request at t = 0") {
  const auto t = sequence(*serving::offline_arrivals(), 1, 100);
  for (double x : t) CHECK(x == 0.0);
}

TEST_CASE("arrivals: same seed gives the same sequence, another seed another") {
  auto make = [](int kind) {
    if (kind == 0) return serving::poisson_arrivals(5);
    if (kind == 1) return serving::gamma_arrivals(5, 3);
    return serving::bursty_arrivals(5, 2, 3);
  };
  for (int kind = 0; kind < 3; ++kind) {
    CAPTURE(kind);
    CHECK(sequence(*make(kind), 11, 1000) == sequence(*make(kind), 11, 1000));
    CHECK(sequence(*make(kind), 11, 1000) != sequence(*make(kind), 12, 1000));
  }
}

TEST_CASE("arrivals: read from the workload mapping, errors name the key") {
  using exasim::config::load_string;
  const auto w = load_string("w: {arrival: gamma, rate_per_s: 4, cv: 2}", "s.yaml")["w"];
  CHECK(exasim::test::contains(serving::make_arrival_process(w)->describe(), "gamma 4/s cv 2"));
  const auto bad_cv = exasim::test::expect_error<exasim::ConfigError>(
      [] { serving::make_arrival_process(load_string("w: {arrival: gamma, rate_per_s: 4, cv: 0}", "s.yaml")["w"]); });
  CHECK(bad_cv.where().key == "w.cv");
  const auto missing = exasim::test::expect_error<exasim::ConfigError>(
      [] { serving::make_arrival_process(load_string("w: {arrival: bursty, rate_per_s: 4}", "s.yaml")["w"]); });
  CHECK(exasim::test::contains(missing.what(), "on_duration"));
  const auto unknown = exasim::test::expect_error<exasim::ConfigError>(
      [] { serving::make_arrival_process(load_string("w: {arrival: poison, rate_per_s: 4}", "s.yaml")["w"]); });
  CHECK(unknown.where().key == "w.arrival");
  CHECK(exasim::test::contains(unknown.hint(), "poisson"));
}
