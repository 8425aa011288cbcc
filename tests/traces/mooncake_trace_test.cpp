#include "traces/mooncake_trace.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <iterator>
#include <numeric>
#include <tuple>
#include <vector>

#include "trace_test_util.hpp"

using exasim::test::drain;
using exasim::test::row_error;
using exasim::test::trace_data;
using exasim::traces::MooncakeOptions;
using exasim::traces::MooncakeTraceSource;
using exasim::workloads::serving::Request;

namespace {

std::vector<std::uint64_t> iota_ids(std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> v(to - from);
  std::iota(v.begin(), v.end(), from);
  return v;
}

std::vector<Request> read(double jitter_s, std::uint64_t seed) {
  MooncakeTraceSource src(trace_data("mooncake_conversation_head.jsonl"), {.jitter_s = jitter_s, .seed = seed});
  return drain(src);
}

// (prompt, output, block count) of each request, sorted: the identity of a bucket's contents.
std::vector<std::tuple<std::int64_t, std::int64_t, std::size_t>> contents(const std::vector<Request>& reqs) {
  std::vector<std::tuple<std::int64_t, std::int64_t, std::size_t>> out;
  for (const auto& r : reqs) out.emplace_back(r.prompt_tokens, r.output_tokens, r.prefix_blocks.size());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// First lines of mooncake_conversation.jsonl, read by hand.
TEST_CASE("mooncake: the conversation slice with prefix hashes") {
  const auto reqs = read(0, 1);
  REQUIRE(reqs.size() == 300);
  CHECK(reqs[0].arrival_s == 0.0);
  CHECK(reqs[0].prompt_tokens == 6758);
  CHECK(reqs[0].output_tokens == 500);
  CHECK(reqs[0].prefix_blocks == iota_ids(0, 14));  // ceil(6758 / 512) = 14 blocks
  CHECK(reqs[0].prefix_block_tokens == 512);
  CHECK(reqs[1].prompt_tokens == 7322);
  std::vector<std::uint64_t> second = {0};
  for (std::uint64_t h : iota_ids(14, 28)) second.push_back(h);
  CHECK(reqs[1].prefix_blocks == second);
  CHECK(reqs[3].prompt_tokens == 2290);
  CHECK(reqs[3].output_tokens == 316);
  CHECK(reqs[3].prefix_blocks == std::vector<std::uint64_t>{0, 42, 43, 44, 45});
  // Buckets: 10 rows at 0 ms, 16 at 3000 ms, 3 at 5999 ms.
  CHECK(reqs[9].arrival_s == 0.0);
  CHECK(reqs[10].arrival_s == 3.0);
  CHECK(reqs[26].arrival_s == 5.999);
  CHECK(reqs[299].arrival_s == 102.0);
}

TEST_CASE("mooncake: jitter spreads each bucket within it, in order, deterministically") {
  const auto plain = read(0, 1);
  const auto a = read(3.0, 7);
  const auto b = read(3.0, 7);
  const auto c = read(3.0, 8);
  REQUIRE(a.size() == plain.size());
  std::vector<double> ta, tb, tc;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ta.push_back(a[i].arrival_s);
    tb.push_back(b[i].arrival_s);
    tc.push_back(c[i].arrival_s);
    CHECK(a[i].id == i);
  }
  CHECK(ta == tb);
  CHECK(ta != tc);
  CHECK(std::is_sorted(ta.begin(), ta.end()));
  // Group both by bucket: a jittered request belongs to the latest bucket start <= its arrival.
  std::map<double, std::vector<Request>> by_plain, by_jitter;
  for (const auto& r : plain) by_plain[r.arrival_s].push_back(r);
  for (const auto& r : a) {
    auto it = by_plain.upper_bound(r.arrival_s);
    REQUIRE(it != by_plain.begin());
    by_jitter[std::prev(it)->first].push_back(r);
  }
  for (const auto& [t, reqs] : by_plain) {
    CAPTURE(t);
    CHECK(contents(by_jitter[t]) == contents(reqs));
  }
  // The 16 requests of the 3 s bucket cover most of [3, 5.999).
  const auto& bucket = by_jitter[3.0];
  const auto [lo, hi] = std::minmax_element(bucket.begin(), bucket.end(),
                                            [](const Request& x, const Request& y) { return x.arrival_s < y.arrival_s; });
  CHECK(hi->arrival_s - lo->arrival_s > 1.5);
  CHECK(hi->arrival_s < 5.999);
  CHECK(a.back().arrival_s < 105.0);  // the last bucket spreads over the jitter width
}

TEST_CASE("mooncake: malformed lines name line and field, with and without jitter") {
  struct Case {
    const char* file;
    int line;
    const char* field;
    const char* message;
  };
  const Case cases[] = {
      {"mooncake_bad_json.jsonl", 3, "", "invalid JSON"},
      {"mooncake_huge_timestamp.jsonl", 2, "timestamp", "later than 4e12 ms"},
      {"mooncake_huge_length.jsonl", 2, "input_length", "more tokens than a request can hold"},
      {"mooncake_deep.jsonl", 2, "", "nested deeper than 64 levels"},
      {"mooncake_number_overflow.jsonl", 2, "", "beyond a double"},
      {"mooncake_missing_field.jsonl", 2, "output_length", "missing field"},
      {"mooncake_bad_hash.jsonl", 3, "hash_ids", "3 blocks"},
      {"mooncake_backwards.jsonl", 4, "timestamp", "backwards by 2.0"},
  };
  for (const auto& c : cases) {
    for (double jitter : {0.0, 3.0}) {
      CAPTURE(c.file);
      CAPTURE(jitter);
      MooncakeTraceSource src(trace_data(c.file), {.jitter_s = jitter, .seed = 1});
      const auto e = row_error(src);
      CHECK(e.where().file == trace_data(c.file));
      CHECK(e.where().line == c.line);
      CHECK(e.where().key == c.field);
      CHECK(exasim::test::contains(e.what(), c.message));
    }
  }
}
