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

sv::Replica make_replica(const workloads::Scenario& s, std::int64_t blocks, sv::Preemption mode) {
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
