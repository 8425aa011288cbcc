#include "traces/request_source_factory.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "trace_test_util.hpp"

using exasim::ConfigError;
using exasim::IoError;
using exasim::config::load_string;
using exasim::test::contains;
using exasim::test::drain;
using exasim::test::expect_error;
using exasim::test::trace_data;
using exasim::traces::detect_trace_format;
using exasim::traces::make_request_source;

namespace {

const std::string kDir = std::string(EXASIM_TEST_DATA) + "/traces";

// The source for `serving: {workload: <yaml>}`, with paths relative to the test data.
std::unique_ptr<exasim::workloads::serving::RequestSource> source(const std::string& yaml, std::uint64_t seed = 1) {
  return make_request_source(load_string("serving:\n  workload: " + yaml + "\n", "scenario.yaml")["serving"]["workload"],
                             seed, kDir);
}

ConfigError config_error(const std::string& yaml) {
  return expect_error<ConfigError>([&] { source(yaml); });
}

}  // namespace

TEST_CASE("factory: formats are detected from the first line") {
  CHECK(detect_trace_format(trace_data("azure_conv_head.csv"))->name == "azure");
  CHECK(detect_trace_format(trace_data("azure_2024_sample.csv"))->name == "azure");
  CHECK(detect_trace_format(trace_data("burstgpt_sample.csv"))->name == "burstgpt");
  CHECK(detect_trace_format(trace_data("mooncake_conversation_head.jsonl"))->name == "mooncake");
  CHECK(detect_trace_format(trace_data("sharegpt_lengths_head.csv"))->name == "lengths");
  CHECK(detect_trace_format(trace_data("azure_bad_header.csv")) == nullptr);
}

TEST_CASE("factory: a trace with cap and time scaling, relative to the scenario folder") {
  const auto reqs = drain(*source("{trace: azure_conv_head.csv, max_requests: 10, time_scale: 2}"));
  REQUIRE(reqs.size() == 10);
  CHECK(std::abs(reqs[1].arrival_s - 4.3145790 / 2) < 1e-9);
  const auto win = drain(*source("{trace: azure_conv_head.csv, format: azure-2024, window: [10 s, 0.5 min]}"));
  REQUIRE(!win.empty());
  CHECK(win.back().arrival_s < 20);
}

TEST_CASE("factory: format options reach the readers") {
  CHECK(drain(*source("{trace: burstgpt_sample.csv}")).size() == 5);
  CHECK(drain(*source("{trace: burstgpt_sample.csv, failed: keep}")).size() == 7);
  CHECK(drain(*source("{trace: burstgpt_sample.csv, failed: keep, model: GPT-4}")).size() == 3);
  const auto plain = drain(*source("{trace: mooncake_conversation_head.jsonl}"));
  const auto jittered = drain(*source("{trace: mooncake_conversation_head.jsonl, jitter: 3 s}", 5));
  REQUIRE(plain.size() == jittered.size());
  CHECK(plain[12].arrival_s == 3.0);
  CHECK(jittered[12].arrival_s != 3.0);
  const auto lens = drain(*source("{trace: sharegpt_lengths_head.csv, arrival: poisson, rate_per_s: 4, max_requests: 20}"));
  REQUIRE(lens.size() == 20);
  CHECK(lens[0].prompt_tokens == 74);
  CHECK(lens[19].arrival_s > 0);
}

TEST_CASE("factory: synthetic sources, empirical lengths drawn as rows of the file") {
  const auto reqs = drain(*source("{arrival: poisson, rate_per_s: 8, requests: 300, "
                                  "prompt_tokens: {dist: empirical, file: sharegpt_lengths_head.csv}, "
                                  "output_tokens: {dist: empirical, file: sharegpt_lengths_head.csv}}"));
  REQUIRE(reqs.size() == 300);
  const auto rows = drain(*source("{trace: sharegpt_lengths_head.csv}"));
  std::set<std::pair<std::int64_t, std::int64_t>> pairs;
  for (const auto& r : rows) pairs.emplace(r.prompt_tokens, r.output_tokens);
  for (const auto& r : reqs) CHECK(pairs.contains({r.prompt_tokens, r.output_tokens}));
}

TEST_CASE("factory: bad keys and values name the key") {
  struct Case {
    const char* yaml;
    const char* key;
    const char* text;
  };
  const Case cases[] = {
      {"{trace: mooncake_conversation_head.jsonl, jiter: 3 s}", "serving.workload.jiter", "unknown key"},
      {"{trace: azure_conv_head.csv, jitter: 3 s}", "serving.workload.jitter", "unknown key"},
      {"{trace: azure_conv_head.csv, format: azure-2025}", "serving.workload.format", "unknown trace format"},
      {"{trace: burstgpt_sample.csv, failed: retry}", "serving.workload.failed", "not one of"},
      {"{trace: azure_conv_head.csv, time_scale: 0}", "serving.workload.time_scale", "positive"},
      {"{trace: azure_conv_head.csv, window: [5]}", "serving.workload.window", "[start, end]"},
      {"{trace: azure_conv_head.csv, window: [30, 10]}", "serving.workload.window[1]", "end after"},
      {"{trace: azure_conv_head.csv, max_requests: 0}", "serving.workload.max_requests", "at least 1"},
      {"{trace: azure_bad_header.csv}", "serving.workload.trace", "cannot tell the format"},
      {"{trace: sharegpt_lengths_head.csv, arrival: gamma, rate_per_s: 2}", "serving.workload", "cv"},
      {"{arrival: poisson, rate_per_s: 8, requests: 5, prompt_tokens: 1, output_tokens: 1, max_requests: 3}",
       "serving.workload.max_requests", "unknown key"},
      {"{requests: 5}", "serving.workload", "either `trace:`"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.yaml);
    const auto e = config_error(c.yaml);
    CHECK(e.where().file == "scenario.yaml");
    CHECK(e.where().line == 2);
    CHECK(e.where().key == c.key);
    CHECK(contains(e.what(), c.text));
  }
  CHECK(contains(config_error("{trace: mooncake_conversation_head.jsonl, jiter: 3 s}").hint(), "jitter"));
}

TEST_CASE("factory: a missing file is an IoError at the key") {
  const auto e = expect_error<IoError>([] { source("{trace: no_such_trace.csv}"); });
  CHECK(e.where().key == "serving.workload.trace");
  CHECK(contains(e.what(), "no_such_trace.csv"));
  const auto f = expect_error<IoError>([] {
    source("{arrival: offline, requests: 5, prompt_tokens: {dist: empirical, file: nope.csv}, output_tokens: 1}");
  });
  CHECK(f.where().key == "serving.workload.prompt_tokens.file");
}

TEST_CASE("factory: help lists every choice") {
  const std::string help = exasim::traces::workload_help();
  for (const char* name : {"azure", "azure-2024", "burstgpt", "mooncake", "lengths", "offline", "poisson", "gamma",
                           "bursty", "fixed", "uniform", "lognormal", "empirical"})
    CHECK(contains(help, name));
}
