// When the KV cache runs out, requests are preempted (by recompute or by swap) and still complete;
// the blocks in use never exceed the cache.
#include <doctest/doctest.h>

#include "serving_fixture.hpp"
#include "workloads/serving/replica.hpp"
#include "workloads/serving/serving_memory.hpp"

namespace {

using namespace exasim;
namespace sv = testing::sv;

struct Drive {
  std::int64_t finished = 0, tokens = 0;
  double now = 0;
};

// Runs a replica by hand to completion, checking the block invariant after every iteration.
Drive drive(sv::Replica& rep) {
  Drive d;
  while (auto dt = rep.start_iteration(d.now)) {
    const auto& kv = rep.state().blocks();
    REQUIRE(kv.used_blocks() <= kv.total_blocks());
    REQUIRE(kv.used_blocks() >= 0);
    d.now += *dt;
    rep.finish_iteration(d.now);
    for (const auto& s : rep.finished()) {
      ++d.finished;
      d.tokens += s.generated;
      CHECK(s.generated == s.req.output_tokens);
    }
    rep.finished().clear();
  }
  return d;
}

sv::Replica make_replica(const workloads::Scenario& s, std::int64_t blocks, sv::Preemption mode, std::int64_t kv_window = 0,
                         double full_fraction = 1) {
  const auto& cfg = *s.serving_config;
  const auto& pool = cfg.pools[0];
  sv::ReplicaLimits limits;
  limits.max_num_seqs = 64;
  limits.max_batch_tokens = 4096;
  limits.preemption = mode;
  const sv::ReplicaMemory mem = sv::replica_memory(s.model, pool, cfg);
  limits.swap_capacity_blocks = 10 * blocks;
  sv::CostModelInputs in{s.model, pool.gpu, pool.kernel, s.calibration.collective, {}, 8, pool.parallelism,
                         cfg.precision, cfg.kv_dtype, 1e-3, pool.host_bandwidth, nullptr};
  sv::ReplicaSetup setup{0, sv::PoolRole::kMixed, "vllm", limits, blocks, 16, 0.01, mem.kv_bytes_per_token, nullptr};
  setup.kv_window = kv_window, setup.kv_full_layer_fraction = full_fraction;
  return sv::Replica(setup, sv::IterationCostModel(in), nullptr);
}

}  // namespace

TEST_CASE("serving: KV blocks never exceed the cache and preempted requests complete") {
  const auto s = testing::serving_scenario("  replicas: 1\n");
  for (const auto mode : {sv::Preemption::kRecompute, sv::Preemption::kSwap}) {
    CAPTURE(static_cast<int>(mode));
    // 400 blocks of 16 tokens = 6400 tokens; 40 requests of 200 + 300 tokens need 20000.
    auto rep = make_replica(s, 400, mode);
    std::int64_t expected_tokens = 0;
    for (int i = 0; i < 40; ++i) {
      rep.add(testing::request(std::uint64_t(i), 0, 200 + 5 * i, 300));
      expected_tokens += 300;
    }
    const Drive d = drive(rep);
    CHECK(d.finished == 40);
    CHECK(d.tokens == expected_tokens);
    CHECK(rep.preemptions() > 0);
    CHECK(rep.state().blocks().peak_used_blocks() <= 400);
    CHECK(rep.state().blocks().used_blocks() == 0);  // everything released at the end
    CHECK(rep.outstanding() == 0);
  }
}

TEST_CASE("serving: a prompt larger than the whole KV cache is rejected, the rest are served") {
  const auto s = testing::serving_scenario("  replicas: 1\n");
  auto rep = make_replica(s, 100, sv::Preemption::kRecompute);  // 1600 tokens
  rep.add(testing::request(0, 0, 5000, 10));
  rep.add(testing::request(1, 0, 100, 10));
  const Drive d = drive(rep);
  CHECK(d.finished == 1);
  CHECK(rep.rejected() == 1);
}

TEST_CASE("serving: the sarathi and orca schedulers also keep within the cache") {
  for (const char* sched : {"sarathi", "orca"}) {
    CAPTURE(sched);
    const auto s = testing::serving_scenario(std::string("  replicas: 1\n  max_num_seqs: 32\n  scheduler: ") + sched + "\n");
    testing::PoissonSource src(50, 500, 700, 150, 3);
    const auto r = testing::run_serving(s, src);
    CHECK(r.completed == 500);
    CHECK(r.kv_peak_utilization <= 1.0);
    if (std::string(sched) == "orca") CHECK(r.preemptions == 0);
  }
}

TEST_CASE("serving: sliding-window layers free the blocks outside their window") {
  // Block counts against the hand formula: half the layers full, window 128, blocks of 16 tokens.
  sv::KvBlockManager kv(1000, 16, 0.0);
  CHECK(kv.blocks_for(1000) == 63);
  kv.set_sliding_window(0.5, 128);
  CHECK(kv.blocks_for(100) == 7);                                   // inside the window: as before
  CHECK(kv.blocks_for(1000) == static_cast<std::int64_t>(std::ceil((500 + 0.5 * (128 + 15)) / 16)));  // 36
  CHECK(kv.blocks_for(100000) == static_cast<std::int64_t>(std::ceil((50000 + 0.5 * 143) / 16)));
  for (std::int64_t t = 1; t < 3000; ++t) CHECK(kv.blocks_for(t) >= kv.blocks_for(t - 1));  // never fewer for more

  // A replica serving long sequences of a half-sliding model holds fewer blocks at its peak than
  // one that keeps every layer's context, and still finishes everything within the cache.
  const auto s = testing::serving_scenario("  replicas: 1\n");
  workloads::Scenario windowed = s;
  windowed.model.sliding_window = 128, windowed.model.sliding_window_pattern = 2;
  auto peak = [&](bool free_outside) {
    auto rep = make_replica(windowed, 4000, sv::Preemption::kRecompute, free_outside ? 128 : 0, 0.5);
    for (int i = 0; i < 8; ++i) rep.add(testing::request(std::uint64_t(i), 0, 2000, 200));
    const Drive d = drive(rep);
    CHECK(d.finished == 8);
    return rep.state().blocks().peak_used_blocks();
  };
  const std::int64_t full = peak(false), freed = peak(true);
  CHECK(full == 8 * ((2200 + 15) / 16));  // every sequence at its end: 2200 tokens of every layer
  CHECK(static_cast<double>(freed) < 0.6 * static_cast<double>(full));
}
