#include "workloads/serving/synthetic_source.hpp"

#include <doctest/doctest.h>

#include <tuple>

#include "hw/config/node.hpp"
#include "trace_test_util.hpp"

namespace serving = exasim::workloads::serving;
using exasim::config::load_string;
using exasim::test::drain;

namespace {

std::unique_ptr<serving::RequestSource> make(const std::string& yaml, std::uint64_t seed) {
  return serving::make_synthetic_source(load_string("w: " + yaml, "s.yaml")["w"], seed, {});
}

}  // namespace

TEST_CASE("synthetic: count, ids, lengths and ordered arrivals") {
  auto src = make("{arrival: poisson, rate_per_s: 8, requests: 2000, prompt_tokens: 1000, "
                  "output_tokens: {dist: uniform, min: 10, max: 20}}",
                  1);
  const auto reqs = drain(*src);
  REQUIRE(reqs.size() == 2000);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    CHECK(reqs[i].id == i);
    CHECK(reqs[i].prompt_tokens == 1000);
    CHECK(reqs[i].output_tokens >= 10);
    CHECK(reqs[i].output_tokens <= 20);
    if (i > 0) CHECK(reqs[i].arrival_s >= reqs[i - 1].arrival_s);
  }
  CHECK_FALSE(src->next());
  CHECK(exasim::test::contains(src->describe(), "2000 requests"));
}

TEST_CASE("synthetic: offline puts every request at t = 0") {
  const auto reqs = drain(*make("{arrival: offline, requests: 50, prompt_tokens: 128, output_tokens: 64}", 1));
  REQUIRE(reqs.size() == 50);
  for (const auto& r : reqs) CHECK(r.arrival_s == 0.0);
}

TEST_CASE("synthetic: same seed gives the same requests, another seed others") {
  const std::string w = "{arrival: gamma, rate_per_s: 3, cv: 2, requests: 500, "
                        "prompt_tokens: {dist: lognormal, median: 700, p90: 2500}, output_tokens: {dist: uniform, min: 1, max: 400}}";
  auto key = [](const std::vector<serving::Request>& v) {
    std::vector<std::tuple<double, std::int64_t, std::int64_t>> out;
    for (const auto& r : v) out.emplace_back(r.arrival_s, r.prompt_tokens, r.output_tokens);
    return out;
  };
  CHECK(key(drain(*make(w, 42))) == key(drain(*make(w, 42))));
  CHECK(key(drain(*make(w, 42))) != key(drain(*make(w, 43))));
}

TEST_CASE("synthetic: unknown or misplaced keys are errors naming the key") {
  const auto e = exasim::test::expect_error<exasim::ConfigError>(
      [] { make("{arrival: poisson, rate_per_s: 8, cv: 2, requests: 10, prompt_tokens: 1, output_tokens: 1}", 1); });
  CHECK(e.where().key == "w.cv");
  const auto m = exasim::test::expect_error<exasim::ConfigError>(
      [] { make("{arrival: poisson, rate_per_s: 8, prompt_tokens: 1, output_tokens: 1}", 1); });
  CHECK(exasim::test::contains(m.what(), "requests"));
}
