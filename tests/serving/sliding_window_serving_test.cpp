// Serving a sliding-window model: a sliding layer's decode reads at most the window's KV tokens
// and its prefill attends within the band; full layers and short contexts are unchanged. (The KV
// cache's blocks of a windowed model: kv_capacity_test.cpp.)
#include <doctest/doctest.h>

#include "approx.hpp"

#include "serving_fixture.hpp"
#include "workloads/serving/iteration_cost.hpp"

namespace {

using namespace exasim;
namespace sv = testing::sv;

}  // namespace

TEST_CASE("serving: sliding-window layers decode over at most the window, full layers over the context") {
  const auto s = testing::serving_scenario("  replicas: 1\n");
  workloads::ModelSpec full = s.model;  // Llama 3.1 8B: 32 layers
  workloads::ModelSpec every = full, alternate = full;
  every.sliding_window = 1024;
  alternate.sliding_window = 1024, alternate.sliding_window_pattern = 2;
  const sv::IterationCostModel f = testing::pool_cost_model(s, full), e = testing::pool_cost_model(s, every), a = testing::pool_cost_model(s, alternate);
  // Contexts inside the window: identical times.
  CHECK(e.decode_step_time(32, 512) == f.decode_step_time(32, 512));
  CHECK(e.prefill_time(1000) == f.prefill_time(1000));
  // Long contexts: an all-sliding model decodes at 32k as at the window; the half-sliding one
  // pays half the layers' long reads (attention times add per layer).
  const auto attention = [](const sv::IterationCostModel& c, double context) {
    sv::BatchShape b;
    b.decodes = 32;
    b.decode_context = b.decode_window_context = 32 * context;
    if (c.inputs().model.sliding_window > 0) b.decode_window_context = 32 * std::min(context, 1024.0);
    return c.attention_time(b);
  };
  CHECK(attention(e, 32768) == exasim::testing::approx(attention(f, 1024)));
  CHECK(attention(a, 32768) == exasim::testing::approx((attention(f, 32768) + attention(f, 1024)) / 2));
  CHECK(e.decode_step_time(32, 32768) < f.decode_step_time(32, 32768));
  // Prefill of a long prompt: the band saves attention work on the sliding layers.
  CHECK(e.prefill_time(16384) < a.prefill_time(16384));
  CHECK(a.prefill_time(16384) < f.prefill_time(16384));
  // A batch mixing a short and a long sequence: min(context, window) per sequence, not of the mean.
  sv::BatchShape mixed;
  mixed.decodes = 2;
  mixed.decode_context = 100 + 30000;
  mixed.decode_window_context = 100 + 1024;
  sv::BatchShape even = mixed;
  even.decode_context = even.decode_window_context = 2 * 562;  // (100 + 1024) / 2 each
  CHECK(e.attention_time(mixed) == exasim::testing::approx(f.attention_time(even)));
}
