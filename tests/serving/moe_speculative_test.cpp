// Speculative decoding emits (1 - a^(k+1)) / (1 - a) tokens per verification step; MoE decode
// reads only the experts its tokens visit; expert parallelism adds the all-to-alls.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "serving_fixture.hpp"
#include "workloads/serving/iteration_cost.hpp"

namespace {

using namespace exasim;
namespace sv = testing::sv;

}  // namespace

TEST_CASE("serving: speculative decoding emits the expected tokens per step") {
  sv::SpeculativeConfig spec;
  spec.tokens = 4;
  spec.acceptance = 0.5;
  CHECK(spec.expected_tokens_per_step() == exasim::testing::approx((1 - 0.03125) / 0.5));
  spec.acceptance = 1;
  CHECK(spec.expected_tokens_per_step() == 5);

  const std::int64_t O = 101;
  for (const double a : {0.0, 0.6, 1.0}) {
    CAPTURE(a);
    const auto s = testing::serving_scenario("  replicas: 1\n  speculative: {draft: llama2-7b, tokens: 4, acceptance: " +
                                             std::to_string(a) + "}\n");
    testing::ListSource src({testing::request(0, 0, 300, O)});
    std::vector<sv::RequestRecord> recs;
    const auto r = testing::run_serving(s, src, [&](const auto& rec) { recs.push_back(rec); });
    REQUIRE(recs.size() == 1);
    CHECK(recs[0].output_tokens == O);
    // One prefill, then (O - 1) tokens at E per step (rounded up: the last step is cut short).
    const double per_step = s.serving_config->speculative->expected_tokens_per_step();
    CHECK(double(r.iterations - 1) == exasim::testing::approx(std::ceil(double(O - 1) / per_step)).epsilon(0.03));
  }
  // Without a draft, 100 decode steps; with a perfect draft, 20 (each a bit dearer: the draft's k steps).
  const auto plain = testing::serving_scenario("  replicas: 1\n");
  const auto fast = testing::serving_scenario("  replicas: 1\n  speculative: {draft: llama2-7b, tokens: 4, acceptance: 1}\n");
  testing::ListSource a({testing::request(0, 0, 300, O)}), b({testing::request(0, 0, 300, O)});
  CHECK(testing::run_serving(fast, b).tpot.mean < testing::run_serving(plain, a).tpot.mean);
}

TEST_CASE("serving: MoE decode reads only the visited experts and EP adds all-to-alls") {
  const auto s = testing::serving_scenario("  parallelism: {tp: 2}\n", "mixtral-8x7b");
  REQUIRE(s.model.moe);
  workloads::ModelSpec all = s.model;
  all.moe->top_k = all.moe->experts;  // every token visits every expert
  const auto top2 = testing::pool_cost_model(s, s.model), top8 = testing::pool_cost_model(s, all);
  // One token: 2 of 8 experts' weights are read instead of 8.
  CHECK(top2.linear_time(1, 1) < 0.5 * top8.linear_time(1, 1));
  // Many tokens visit every expert anyway: the weights read are the same, the FLOPs 4x apart.
  CHECK(top2.linear_time(4096, 1) < top8.linear_time(4096, 1));
  const auto ep = testing::serving_scenario("  parallelism: {tp: 2, ep: 2}\n", "mixtral-8x7b");
  CHECK(testing::pool_cost_model(ep, ep.model).linear_time(512, 1) != exasim::testing::approx(testing::pool_cost_model(s, s.model).linear_time(512, 1)));
}
