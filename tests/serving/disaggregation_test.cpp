// Prefill/decode disaggregation moves exactly each request's prompt KV:
// 2 x layers x kv_heads x head_dim x prompt tokens x dtype size.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "serving_fixture.hpp"

TEST_CASE("serving: disaggregation moves exactly the KV bytes of each request") {
  using namespace exasim;
  for (const char* kv : {"bf16", "fp8"}) {
    CAPTURE(kv);
    const auto s = testing::serving_scenario(std::string("  parallelism: {tp: 2}\n  kv_cache_dtype: ") + kv +
                                             "\n  disaggregation: {prefill_replicas: 1, decode_replicas: 2}\n");
    const double bytes = std::string(kv) == "fp8" ? 1 : 2;
    std::vector<testing::sv::Request> reqs;
    for (int i = 0; i < 30; ++i) reqs.push_back(testing::request(std::uint64_t(i), 0.05 * i, 100 + 37 * i, 10 + i));
    testing::ListSource src(reqs);
    std::vector<testing::sv::RequestRecord> recs;
    const auto r = testing::run_serving(s, src, [&](const auto& rec) { recs.push_back(rec); });
    REQUIRE(recs.size() == 30);
    double total = 0;
    for (const auto& rec : recs) {
      // llama3.1-8b: 32 layers, 8 KV heads of 128.
      const double expect = 2.0 * 32 * 8 * 128 * double(rec.prompt_tokens) * bytes;
      CHECK(rec.kv_transfer_bytes == expect);
      CHECK(rec.prefill_replica == 0);
      CHECK(rec.replica >= 1);
      CHECK(rec.output_tokens == std::int64_t(10 + rec.id));
      total += expect;
    }
    CHECK(r.kv_transfer_bytes == total);
    CHECK(r.pools.size() == 2);
  }
}

TEST_CASE("serving: a one-token request finishes on the prefill replica and moves nothing") {
  using namespace exasim;
  const auto s = testing::serving_scenario("  disaggregation: {prefill_replicas: 1, decode_replicas: 1}\n");
  testing::ListSource src({testing::request(0, 0, 500, 1)});
  std::vector<testing::sv::RequestRecord> recs;
  testing::run_serving(s, src, [&](const auto& rec) { recs.push_back(rec); });
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].kv_transfer_bytes == 0);
  CHECK(recs[0].replica == 0);
}

TEST_CASE("serving: the KV transfer delays the second token by the network time") {
  using namespace exasim;
  const auto co = testing::serving_scenario("  replicas: 1\n  max_num_seqs: 1\n");
  const auto pd = testing::serving_scenario("  max_num_seqs: 1\n  disaggregation: {prefill_replicas: 1, decode_replicas: 1}\n");
  testing::ListSource a({testing::request(0, 0, 4000, 2)}), b({testing::request(0, 0, 4000, 2)});
  const auto rc = testing::run_serving(co, a);
  const auto rd = testing::run_serving(pd, b);
  CHECK(rd.ttft.mean == exasim::testing::approx(rc.ttft.mean).epsilon(1e-12));  // same prefill
  // 4000 tokens x 128 KiB = 524 MB over NVLink (450 GB/s x 0.8): about 1.5 ms more.
  const double extra = rd.e2e.mean - rc.e2e.mean;
  CHECK(extra > 1.0e-3);
  CHECK(extra < 3.0e-3);
}

TEST_CASE("serving: heterogeneous pools: a faster prefill GPU shortens TTFT, decode is unchanged") {
  using namespace exasim;
  const auto same = testing::serving_scenario("  disaggregation: {prefill_replicas: 1, decode_replicas: 1}\n");
  const auto hetero = testing::serving_scenario(
      "  disaggregation: {prefill: {replicas: 1, gpu: B200}, decode: {replicas: 1}}\n");
  testing::ListSource a({testing::request(0, 0, 3000, 20)}), b({testing::request(0, 0, 3000, 20)});
  const auto rs = testing::run_serving(same, a);
  const auto rh = testing::run_serving(hetero, b);
  CHECK(rh.ttft.mean < rs.ttft.mean);
  CHECK(rh.tpot.mean == exasim::testing::approx(rs.tpot.mean).epsilon(0.02));  // same decode GPU (transfer aside)
  CHECK(rh.pools[0].gpu == "B200");
}
