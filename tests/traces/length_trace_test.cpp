#include "traces/length_trace.hpp"

#include <doctest/doctest.h>

#include "trace_test_util.hpp"

using exasim::test::drain;
using exasim::test::row_error;
using exasim::test::trace_data;
using exasim::traces::LengthTraceSource;
using exasim::traces::load_length_table;
namespace serving = exasim::workloads::serving;

// First rows of sharegpt_8k_lengths_llama2.csv: (74, 918), (290, 905), (1402, 711); last of the
// slice (2853, 831).
TEST_CASE("length trace: rows in order, offline arrivals") {
  LengthTraceSource src(trace_data("sharegpt_lengths_head.csv"), serving::offline_arrivals(), 1);
  const auto reqs = drain(src);
  REQUIRE(reqs.size() == 300);
  CHECK(reqs[0].prompt_tokens == 74);
  CHECK(reqs[0].output_tokens == 918);
  CHECK(reqs[1].prompt_tokens == 290);
  CHECK(reqs[1].output_tokens == 905);
  CHECK(reqs[2].prompt_tokens == 1402);
  CHECK(reqs[299].prompt_tokens == 2853);
  CHECK(reqs[299].output_tokens == 831);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    CHECK(reqs[i].arrival_s == 0.0);
    CHECK(reqs[i].id == i);
  }
}

TEST_CASE("length trace: arrivals from a seeded process") {
  auto read = [](std::uint64_t seed) {
    LengthTraceSource src(trace_data("sharegpt_lengths_head.csv"), serving::poisson_arrivals(10), seed);
    return drain(src);
  };
  const auto a = read(3), b = read(3), c = read(4);
  REQUIRE(a.size() == 300);
  for (std::size_t i = 1; i < a.size(); ++i) CHECK(a[i].arrival_s > a[i - 1].arrival_s);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].arrival_s == b[i].arrival_s);
  CHECK(a[0].arrival_s != c[0].arrival_s);
  CHECK(a[1].prompt_tokens == c[1].prompt_tokens);  // lengths come from the file, not the RNG
}

TEST_CASE("length trace: a malformed row names line and column") {
  LengthTraceSource src(trace_data("lengths_bad.csv"), serving::offline_arrivals(), 1);
  const auto e = row_error(src);
  CHECK(e.where().line == 3);
  CHECK(e.where().key == "num_decode_tokens");
  const auto t = exasim::test::expect_error<exasim::ConfigError>([] { load_length_table(trace_data("lengths_bad.csv")); });
  CHECK(t.where().line == 3);
}

TEST_CASE("length trace: the whole table for empirical sampling") {
  const auto table = load_length_table(trace_data("sharegpt_lengths_head.csv"));
  REQUIRE(table->prompt.size() == 300);
  REQUIRE(table->output.size() == 300);
  CHECK(table->prompt[0] == 74);
  CHECK(table->output[0] == 918);
  CHECK(table->prompt[299] == 2853);
  CHECK(table->source == "sharegpt_lengths_head.csv");
}
