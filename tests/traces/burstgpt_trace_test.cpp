#include "traces/burstgpt_trace.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "trace_test_util.hpp"

using exasim::test::drain;
using exasim::test::row_error;
using exasim::test::trace_data;
using exasim::traces::BurstGptOptions;
using exasim::traces::BurstGptTraceSource;

namespace {

std::vector<double> arrivals(const std::vector<exasim::workloads::serving::Request>& reqs) {
  std::vector<double> out;
  for (const auto& r : reqs) out.push_back(r.arrival_s);
  return out;
}

}  // namespace

// burstgpt_sample.csv (hand-made in BurstGPT's format): Timestamps 5, 45 (failed), 118 (GPT-4),
// 118, 260 (GPT-4, failed), 301, 350.5 (GPT-4). Arrivals count from the first row (5 s).
TEST_CASE("burstgpt: failed requests are dropped by default") {
  BurstGptTraceSource src(trace_data("burstgpt_sample.csv"), {});
  const auto reqs = drain(src);
  CHECK(arrivals(reqs) == std::vector<double>{0, 113, 113, 296, 345.5});
  REQUIRE(reqs.size() == 5);
  CHECK(reqs[0].prompt_tokens == 472);
  CHECK(reqs[0].output_tokens == 18);
  CHECK(reqs[1].prompt_tokens == 417);
  CHECK(reqs[1].output_tokens == 276);
  CHECK(reqs[4].output_tokens == 502);
  for (std::size_t i = 0; i < reqs.size(); ++i) CHECK(reqs[i].id == i);
}

TEST_CASE("burstgpt: failed requests kept arrive with zero output tokens") {
  BurstGptTraceSource src(trace_data("burstgpt_sample.csv"), {.keep_failed = true, .model = ""});
  const auto reqs = drain(src);
  CHECK(arrivals(reqs) == std::vector<double>{0, 40, 113, 113, 255, 296, 345.5});
  REQUIRE(reqs.size() == 7);
  CHECK(reqs[1].prompt_tokens == 1087);
  CHECK(reqs[1].output_tokens == 0);
  CHECK(reqs[4].output_tokens == 0);
}

TEST_CASE("burstgpt: a model filter keeps the trace's own time axis") {
  BurstGptTraceSource chat(trace_data("burstgpt_sample.csv"), {.keep_failed = false, .model = "ChatGPT"});
  CHECK(arrivals(drain(chat)) == std::vector<double>{0, 113, 296});
  BurstGptTraceSource gpt4(trace_data("burstgpt_sample.csv"), {.keep_failed = true, .model = "GPT-4"});
  CHECK(arrivals(drain(gpt4)) == std::vector<double>{113, 255, 345.5});
}

TEST_CASE("burstgpt: malformed rows name line and column, even rows a filter would drop") {
  BurstGptTraceSource bad(trace_data("burstgpt_bad.csv"), {.keep_failed = false, .model = "ChatGPT"});
  const auto e = row_error(bad);
  CHECK(e.where().line == 4);
  CHECK(e.where().key == "Response tokens");
  BurstGptTraceSource bad_time(trace_data("burstgpt_bad_time.csv"), {});
  const auto t = row_error(bad_time);
  CHECK(t.where().line == 3);
  CHECK(t.where().key == "Timestamp");
  CHECK(exasim::test::contains(t.what(), "five"));
}
