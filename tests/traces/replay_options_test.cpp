#include "traces/replay_options.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "trace_test_util.hpp"
#include "traces/azure_trace.hpp"

using exasim::test::drain;
using exasim::test::trace_data;
using exasim::traces::AzureTraceSource;
using exasim::traces::ReplayOptions;
using exasim::traces::ReplaySource;
using exasim::workloads::serving::Request;
using exasim::workloads::serving::RequestSource;

namespace {

std::vector<Request> conv(ReplayOptions o) {
  ReplaySource src(std::make_unique<AzureTraceSource>(trace_data("azure_conv_head.csv")), o);
  return drain(src);
}

// Arrivals 0, 1, 2, ...; fails the test if read past `limit` (the reader must stop at the window end).
class Counting final : public RequestSource {
 public:
  explicit Counting(int limit) : limit_(limit) {}
  std::optional<Request> next() override {
    if (n_ > limit_) throw std::logic_error("read past the end of the window");
    Request r;
    r.arrival_s = n_++;
    return r;
  }
  std::string describe() const override { return "counting"; }

 private:
  int limit_;
  int n_ = 0;
};

}  // namespace

TEST_CASE("replay: time scaling divides arrivals, lengths unchanged") {
  const auto plain = conv({});
  const auto fast = conv({.time_scale = 4});
  REQUIRE(fast.size() == plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    CHECK(fast[i].arrival_s == plain[i].arrival_s / 4);
    CHECK(fast[i].prompt_tokens == plain[i].prompt_tokens);
  }
}

TEST_CASE("replay: a window keeps start <= t < end and starts the clock at its start") {
  const auto plain = conv({});
  const auto win = conv({.window_start_s = 10, .window_end_s = 30});
  std::vector<Request> expected;
  for (const auto& r : plain)
    if (r.arrival_s >= 10 && r.arrival_s < 30) expected.push_back(r);
  REQUIRE(!expected.empty());
  REQUIRE(win.size() == expected.size());
  for (std::size_t i = 0; i < win.size(); ++i) {
    CHECK(win[i].arrival_s == expected[i].arrival_s - 10);
    CHECK(win[i].prompt_tokens == expected[i].prompt_tokens);
    CHECK(win[i].id == i);
  }
}

TEST_CASE("replay: a cap, and the three together") {
  const auto capped = conv({.max_requests = 25});
  REQUIRE(capped.size() == 25);
  CHECK(capped.back().id == 24);
  const auto plain = conv({});
  const auto all = conv({.window_start_s = 20, .window_end_s = 80, .time_scale = 2, .max_requests = 5});
  std::vector<Request> expected;
  for (const auto& r : plain)
    if (r.arrival_s >= 20 && expected.size() < 5) expected.push_back(r);
  REQUIRE(all.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) CHECK(all[i].arrival_s == (expected[i].arrival_s - 20) / 2);
}

TEST_CASE("replay: reading stops at the window's end") {
  ReplaySource src(std::make_unique<Counting>(5), {.window_start_s = 2, .window_end_s = 5});
  const auto reqs = drain(src);  // Counting throws if asked for a row after arrival 5
  REQUIRE(reqs.size() == 3);
  CHECK(reqs[0].arrival_s == 0);
  CHECK(reqs[2].arrival_s == 2);
  CHECK_FALSE(src.next());
  CHECK(exasim::test::contains(src.describe(), "window [2, 5)"));
}

TEST_CASE("replay: a trace that yields no request is an error at its key, not an empty report") {
  // Issue 29: an Azure trace of a header and no rows ran and reported 0 iterations, exit 0.
  const exasim::SourceLocation key{"s.yaml", 22, "serving.workload.trace"};
  const std::string header_only = (std::filesystem::temp_directory_path() / "exasim_azure_header_only.csv").string();
  std::ofstream(header_only) << "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  ReplaySource empty(std::make_unique<AzureTraceSource>(header_only), {}, key);
  try {
    empty.next();
    FAIL("no error");
  } catch (const exasim::ConfigError& e) {
    CHECK(e.where().line == 22);
    CHECK(e.where().key == "serving.workload.trace");
    CHECK(exasim::test::contains(e.what(), "the trace has no requests"));
  }
  // Rows, none inside the window: said so.
  ReplaySource outside(std::make_unique<Counting>(5), {.window_start_s = 0.2, .window_end_s = 0.5}, key);
  CHECK_THROWS_WITH_AS(outside.next(), doctest::Contains("no request arrives inside the window"), exasim::ConfigError);
}
