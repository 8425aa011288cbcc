#include "workloads/serving/length_distribution.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "hw/config/node.hpp"
#include "trace_test_util.hpp"

namespace serving = exasim::workloads::serving;
using exasim::config::load_string;
using serving::Rng;

namespace {

std::vector<std::int64_t> draw(const serving::LengthDistribution& d, int n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(d.sample(rng));
  return out;
}

std::shared_ptr<const serving::LengthTable> two_rows() {
  auto t = std::make_shared<serving::LengthTable>();
  t->prompt = {100, 2000};
  t->output = {7, 300};
  t->source = "two rows";
  return t;
}

serving::LengthTableLoader loader(std::shared_ptr<const serving::LengthTable> a,
                                  std::shared_ptr<const serving::LengthTable> b) {
  return [a, b](const exasim::config::Node& file) { return file.as_string() == "a.csv" ? a : b; };
}

}  // namespace

TEST_CASE("length distributions: fixed and uniform") {
  for (auto x : draw(*serving::fixed_length(512), 100, 1)) CHECK(x == 512);
  const auto u = draw(*serving::uniform_length(1, 6), 60'000, 2);
  std::map<std::int64_t, int> freq;
  for (auto x : u) ++freq[x];
  REQUIRE(freq.size() == 6);
  CHECK(freq.begin()->first == 1);
  CHECK(freq.rbegin()->first == 6);
  // Each face 1/6: sd of a count is sqrt(n p (1-p)) ~ 91; 5 sd.
  for (const auto& [v, c] : freq) CHECK(std::abs(c - 10'000) < 460);
}

TEST_CASE("length distributions: lognormal by median and p90 recovers its parameters") {
  const double median = 800, p90 = 3000;
  const double mu = std::log(median), sigma = std::log(p90 / median) / 1.2815515655446004;
  auto d = serving::lognormal_length(median, p90, 1'000'000'000);
  auto x = draw(*d, 100'000, 3);
  double m = 0, v = 0;
  for (auto t : x) m += std::log(static_cast<double>(t));
  m /= static_cast<double>(x.size());
  for (auto t : x) v += (std::log(static_cast<double>(t)) - m) * (std::log(static_cast<double>(t)) - m);
  const double s = std::sqrt(v / static_cast<double>(x.size() - 1));
  CHECK(std::abs(m - mu) < 5 * sigma / std::sqrt(1e5));
  CHECK(std::abs(s - sigma) < 5 * sigma / std::sqrt(2e5));
  std::sort(x.begin(), x.end());
  CHECK(std::abs(static_cast<double>(x[50'000]) / median - 1) < 0.03);
  CHECK(std::abs(static_cast<double>(x[90'000]) / p90 - 1) < 0.03);
  // Clamped to [1, max].
  for (auto t : draw(*serving::lognormal_length(800, 3000, 1000), 10'000, 4)) {
    CHECK(t >= 1);
    CHECK(t <= 1000);
  }
}

TEST_CASE("length distributions: empirical rows, drawn jointly when prompt and output share a file") {
  const auto table = two_rows();
  std::map<std::int64_t, int> freq;
  for (auto x : draw(*serving::empirical_length(table, true), 20'000, 5)) ++freq[x];
  CHECK(freq.size() == 2);
  CHECK(std::abs(freq[100] - 10'000) < 360);  // 5 sd of a fair coin count
  const auto both = load_string("p: {dist: empirical, file: a.csv}\no: {dist: empirical, file: a.csv}", "s.yaml");
  auto joint = serving::make_request_lengths(both["p"], both["o"], loader(table, two_rows()));
  Rng rng(6);
  for (int i = 0; i < 1000; ++i) {
    const auto [p, o] = joint.sample(rng);
    CHECK(((p == 100 && o == 7) || (p == 2000 && o == 300)));
  }
  // Two different files: independent, so all four combinations occur.
  const auto apart = load_string("p: {dist: empirical, file: a.csv}\no: {dist: empirical, file: b.csv}", "s.yaml");
  auto indep = serving::make_request_lengths(apart["p"], apart["o"], loader(table, two_rows()));
  std::map<std::pair<std::int64_t, std::int64_t>, int> pairs;
  for (int i = 0; i < 1000; ++i) ++pairs[indep.sample(rng)];
  CHECK(pairs.size() == 4);
}

TEST_CASE("length distributions: same seed, same lengths") {
  const auto n = load_string("p: {dist: lognormal, median: 500, p90: 2000}\no: {dist: uniform, min: 10, max: 900}", "s.yaml");
  auto a = serving::make_request_lengths(n["p"], n["o"], {});
  auto b = serving::make_request_lengths(n["p"], n["o"], {});
  Rng ra(9), rb(9), rc(10);
  std::vector<std::pair<std::int64_t, std::int64_t>> sa, sb, sc;
  for (int i = 0; i < 500; ++i) {
    sa.push_back(a.sample(ra));
    sb.push_back(b.sample(rb));
    sc.push_back(a.sample(rc));
  }
  CHECK(sa == sb);
  CHECK(sa != sc);
}

TEST_CASE("length distributions: read from YAML, errors name the key") {
  const auto y = load_string(
      "fixed: 1000\n"
      "bad_p90: {dist: lognormal, median: 800, p90: 500}\n"
      "bad_dist: {dist: zipf}\n"
      "bad_key: {dist: lognormal, mean: 800, p90: 3000}\n"
      "bad_uniform: {dist: uniform, min: 10, max: 5}\n"
      "zero: 0\n",
      "s.yaml");
  Rng rng(1);
  CHECK(serving::make_length_distribution(y["fixed"], true, {})->sample(rng) == 1000);
  struct Case {
    const char* key;
    const char* where;
  };
  for (const Case c : {Case{"bad_p90", "bad_p90.p90"}, Case{"bad_dist", "bad_dist.dist"}, Case{"bad_key", "bad_key.mean"},
                       Case{"bad_uniform", "bad_uniform.max"}, Case{"zero", "zero"}}) {
    CAPTURE(c.key);
    const auto e = exasim::test::expect_error<exasim::ConfigError>(
        [&] { serving::make_length_distribution(y[c.key], true, {}); });
    CHECK(e.where().key == c.where);
    CHECK(e.where().file == "s.yaml");
  }
}
