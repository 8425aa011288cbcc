#include "traces/azure_trace.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "trace_test_util.hpp"

using exasim::ConfigError;
using exasim::test::drain;
using exasim::test::row_error;
using exasim::test::trace_data;
using exasim::traces::AzureTraceSource;

// Expected values were read off the files by hand (first rows of AzureLLMInferenceTrace_conv.csv).
TEST_CASE("azure 2023: the conversation trace slice, values and fractional seconds exact") {
  AzureTraceSource src(trace_data("azure_conv_head.csv"));
  const auto reqs = drain(src);
  REQUIRE(reqs.size() == 300);
  CHECK(reqs[0].arrival_s == 0.0);
  CHECK(reqs[0].prompt_tokens == 374);
  CHECK(reqs[0].output_tokens == 44);
  // 18:15:50.9951690 - 18:15:46.6805900 and 18:15:51.2224670 - 18:15:46.6805900.
  CHECK(std::abs(reqs[1].arrival_s - 4.3145790) < 1e-9);
  CHECK(reqs[1].prompt_tokens == 396);
  CHECK(reqs[1].output_tokens == 109);
  CHECK(std::abs(reqs[2].arrival_s - 4.5418770) < 1e-9);
  CHECK(reqs[2].prompt_tokens == 879);
  // Last row: 2023-11-16 18:17:10.7096920,212,183.
  CHECK(std::abs(reqs[299].arrival_s - 84.0291020) < 1e-9);
  CHECK(reqs[299].prompt_tokens == 212);
  CHECK(reqs[299].output_tokens == 183);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    CHECK(reqs[i].id == i);
    CHECK(reqs[i].prefix_blocks.empty());
    if (i > 0) CHECK(reqs[i].arrival_s >= reqs[i - 1].arrival_s);
  }
  CHECK(exasim::test::contains(src.describe(), "azure_conv_head.csv"));
}

TEST_CASE("azure 2024: mixed sub-second precision and UTC offsets") {
  AzureTraceSource src(trace_data("azure_2024_sample.csv"));
  const auto reqs = drain(src);
  REQUIRE(reqs.size() == 7);
  // First row 00:00:00.009930+00:00; the +02:00 and -03:00 rows are 00:00:03.5 and 00:00:04.75 UTC.
  const double expected[] = {0, 0.09007, 0.99007, 1.24007, 1.990071, 3.49007, 4.74007};
  for (std::size_t i = 0; i < reqs.size(); ++i) CHECK(std::abs(reqs[i].arrival_s - expected[i]) < 1e-9);
  CHECK(reqs[0].prompt_tokens == 2048);
  CHECK(reqs[0].output_tokens == 28);
  CHECK(reqs[6].prompt_tokens == 12);
  CHECK(reqs[6].output_tokens == 1);
}

TEST_CASE("azure: every malformed row names file, line and column") {
  struct Case {
    const char* file;
    int line;
    const char* column;
    const char* message;
  };
  const Case cases[] = {
      {"azure_bad_number.csv", 4, "GeneratedTokens", "whole number"},
      {"azure_missing_column.csv", 3, "GeneratedTokens", "missing column"},
      {"azure_negative_tokens.csv", 5, "ContextTokens", "negative"},
      {"azure_backwards.csv", 4, "TIMESTAMP", "backwards by 2.0"},  // line 3 is 0.5 ms back: tolerated
      {"azure_bad_timestamp.csv", 3, "TIMESTAMP", "day 31"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    AzureTraceSource src(trace_data(c.file));
    const ConfigError e = row_error(src);
    CHECK(e.where().file == trace_data(c.file));
    CHECK(e.where().line == c.line);
    CHECK(e.where().key == c.column);
    CHECK(exasim::test::contains(e.what(), c.message));
  }
}

TEST_CASE("azure: a row slightly out of order is moved up to the latest time") {
  AzureTraceSource src(trace_data("azure_backwards.csv"));
  const auto first = src.next();
  const auto second = src.next();  // 0.5 ms before the first: within the tolerance
  REQUIRE(second);
  CHECK(second->arrival_s == first->arrival_s);
}

TEST_CASE("azure: a header without the expected columns is an error on line 1") {
  const auto e = exasim::test::expect_error<ConfigError>([] { AzureTraceSource src(trace_data("azure_bad_header.csv")); });
  CHECK(e.where().line == 1);
  CHECK(e.where().key == "TIMESTAMP");
  CHECK(exasim::test::contains(e.hint(), "TIME,ContextTokens,GeneratedTokens"));
}
