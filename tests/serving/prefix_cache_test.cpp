// Prefix caching: identical prompts hit exactly their full shared prefix units; LRU eviction.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "serving_fixture.hpp"
#include "workloads/serving/kv_block_manager.hpp"

namespace {

using namespace exasim;
namespace sv = testing::sv;

sv::Request with_prefix(std::uint64_t id, double arrival, std::int64_t prompt, std::vector<std::uint64_t> blocks) {
  sv::Request r = testing::request(id, arrival, prompt, 20);
  r.prefix_blocks = std::move(blocks);
  r.prefix_block_tokens = 512;
  return r;
}

}  // namespace

TEST_CASE("serving: identical prompts hit the prefix cache as expected") {
  const auto s = testing::serving_scenario("  replicas: 1\n  prefix_caching: true\n");
  // 2100-token prompts: 4 full 512-token units (2048 tokens) are shareable, 52 tokens are not.
  const int n = 10;
  std::vector<sv::Request> reqs;
  for (int i = 0; i < n; ++i) reqs.push_back(with_prefix(std::uint64_t(i), 10.0 * i, 2100, {11, 22, 33, 44, 55}));
  testing::ListSource src(reqs);
  std::vector<sv::RequestRecord> recs;
  const auto r = testing::run_serving(s, src, [&](const auto& rec) { recs.push_back(rec); });
  REQUIRE(recs.size() == std::size_t(n));
  CHECK(recs[0].prefix_hit_tokens == 0);
  for (int i = 1; i < n; ++i) {
    CHECK(recs[std::size_t(i)].prefix_hit_tokens == 2048);
    CHECK(recs[std::size_t(i)].ttft_s < recs[0].ttft_s);  // only 52 tokens left to prefill
  }
  CHECK(r.prefix_hit_rate == exasim::testing::approx(double(n - 1) * 2048 / (double(n) * 2100)).epsilon(1e-12));
}

TEST_CASE("serving: different prefixes do not hit, and a shared head hits only its length") {
  const auto s = testing::serving_scenario("  replicas: 1\n  prefix_caching: true\n");
  testing::ListSource src({with_prefix(0, 0, 2100, {1, 2, 3, 4}), with_prefix(1, 10, 2100, {1, 2, 9, 9}),
                           with_prefix(2, 20, 2100, {7, 2, 3, 4})});
  std::vector<sv::RequestRecord> recs;
  testing::run_serving(s, src, [&](const auto& rec) { recs.push_back(rec); });
  REQUIRE(recs.size() == 3);
  CHECK(recs[1].prefix_hit_tokens == 1024);  // units 1, 2 shared; 9 differs
  CHECK(recs[2].prefix_hit_tokens == 0);     // a different first unit: nothing after it is shared
}

TEST_CASE("serving: without prefix caching nothing hits") {
  const auto s = testing::serving_scenario("  replicas: 1\n");
  testing::ListSource src({with_prefix(0, 0, 2100, {1, 2, 3, 4}), with_prefix(1, 10, 2100, {1, 2, 3, 4})});
  CHECK(testing::run_serving(s, src).prefix_hit_rate == 0);
}

TEST_CASE("serving: the block manager evicts the least recently released unit first") {
  sv::KvBlockManager kv(10, 16, 0, 4);  // 10 blocks, units of 4 blocks
  const std::uint64_t a = 1, b = 2;
  kv.allocate(8);
  CHECK(kv.publish(a));
  CHECK(kv.publish(b));
  CHECK_FALSE(kv.publish(a));
  kv.release_units(&a, 1);  // released first
  kv.release_units(&b, 1);
  CHECK(kv.used_blocks() == 0);
  CHECK(kv.cached_blocks() == 8);
  CHECK(kv.available_blocks() == 10);
  kv.allocate(5);  // 2 free + evicts one unit (a)
  CHECK(kv.match(&a, 1) == 0);
  CHECK(kv.match(&b, 1) == 1);
  CHECK(kv.acquire_cost(&b, 1) == 4);
  CHECK(kv.can_allocate(1, false));
  CHECK_FALSE(kv.can_allocate(6, false));
  CHECK(kv.peak_used_blocks() == 8);
}
