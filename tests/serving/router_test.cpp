#include <doctest/doctest.h>

#include "approx.hpp"

#include "serving_fixture.hpp"
#include "workloads/serving/router.hpp"

namespace {

using namespace exasim;
namespace sv = testing::sv;

std::unique_ptr<sv::Router> make(const char* name, std::uint64_t seed = 1) {
  const sv::RouterInfo* info = sv::find_router(name);
  REQUIRE(info != nullptr);
  return info->make(seed);
}

}  // namespace

TEST_CASE("serving: router table lists every router with help") {
  CHECK(sv::router_names() == "round-robin | random | least-outstanding | prefix-affinity");
  for (const auto& r : sv::routers()) CHECK_FALSE(r.help.empty());
  CHECK(sv::find_router("nope") == nullptr);
}

TEST_CASE("serving: round-robin, least-outstanding and random routers") {
  const sv::Request r;
  std::vector<sv::ReplicaLoad> loads(3);
  auto rr = make("round-robin");
  CHECK(rr->pick(r, loads) == 0);
  CHECK(rr->pick(r, loads) == 1);
  CHECK(rr->pick(r, loads) == 2);
  CHECK(rr->pick(r, loads) == 0);
  loads = {{5, 0}, {2, 0}, {2, 0}};
  CHECK(make("least-outstanding")->pick(r, loads) == 1);  // ties: the lowest index
  auto a = make("random", 42), b = make("random", 42);
  std::vector<int> count(3, 0);
  for (int i = 0; i < 3000; ++i) {
    const auto x = a->pick(r, loads);
    CHECK(x == b->pick(r, loads));  // same seed, same choices
    ++count[x];
  }
  for (const int c : count) CHECK(c == exasim::testing::approx(1000).epsilon(0.1));
}

TEST_CASE("serving: prefix-affinity prefers the replica that caches the prompt's prefix") {
  auto pa = make("prefix-affinity");
  sv::Request r;
  r.prefix_blocks = {8, 1};
  std::vector<sv::ReplicaLoad> loads = {{0, 0}, {9, 1024}, {1, 512}};
  CHECK(pa->pick(r, loads) == 1);
  loads = {{0, 0}, {9, 0}, {1, 0}};
  CHECK(pa->pick(r, loads) == 8 % 3);  // no hit anywhere: by the first prefix block
  r.prefix_blocks.clear();
  CHECK(pa->pick(r, loads) == 0);      // no prefix information: least outstanding
}

TEST_CASE("serving: prefix-affinity across replicas keeps shared prefixes together") {
  const auto s = testing::serving_scenario("  replicas: 4\n  prefix_caching: true\n  router: prefix-affinity\n");
  std::vector<sv::Request> reqs;
  for (int i = 0; i < 40; ++i) {
    sv::Request q = testing::request(std::uint64_t(i), 0.5 * i, 1100, 5);
    q.prefix_blocks = {std::uint64_t(100 + i % 2), 7};  // two conversations
    q.prefix_block_tokens = 512;
    reqs.push_back(q);
  }
  testing::ListSource src(reqs);
  const auto r = testing::run_serving(s, src);
  CHECK(r.prefix_hit_rate == exasim::testing::approx(38.0 * 1024 / (40.0 * 1100)).epsilon(1e-12));
}
