#include <doctest/doctest.h>

#include "approx.hpp"

#include "serving_fixture.hpp"

namespace {

using namespace exasim;

std::string error_of(const std::string& body, const std::string& model = "llama3.1-8b") {
  try {
    testing::serving_scenario(body, model);
  } catch (const Error& e) {
    return e.describe();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("serving reader: keys, defaults and pools") {
  const auto s = testing::serving_scenario(
      "  parallelism: {tp: 2}\n  precision: fp8\n  scheduler: sarathi\n  chunked_prefill: 256\n"
      "  slo: {ttft: 500 ms, tpot: 50 ms}\n  cpu_overhead: 2 ms\n  router: least-outstanding\n");
  const auto& c = *s.serving_config;
  REQUIRE(c.pools.size() == 1);
  CHECK(c.pools[0].replicas == 4);  // 8 GPUs / tp 2
  CHECK(c.pools[0].parallelism.tp == 2);
  CHECK(c.precision == DType::kFp8);
  CHECK(c.kv_dtype == DType::kBf16);  // vLLM "auto"
  CHECK_FALSE(c.decode_attention_matrix);  // vLLM's CUDA-core paged attention
  CHECK(c.scheduler == "sarathi");
  CHECK(c.chunked_prefill == 256);
  CHECK(c.slo.ttft_s == exasim::testing::approx(0.5));
  CHECK(c.slo.tpot_s == exasim::testing::approx(0.05));
  CHECK(c.cpu_overhead_s == exasim::testing::approx(2e-3));
  CHECK(c.router == "least-outstanding");
  CHECK(c.pools[0].host_bandwidth > 0);
  CHECK(c.max_num_seqs == 256);

  const auto pd = testing::serving_scenario(
      "  disaggregation: {prefill: {replicas: 2, parallelism: {tp: 2}, gpu: H200-SXM-141GB}, decode: {replicas: 4}}\n");
  const auto& p = *pd.serving_config;
  REQUIRE(p.pools.size() == 2);
  CHECK(p.pools[0].role == testing::sv::PoolRole::kPrefill);
  CHECK(p.pools[0].gpu.name == "H200-SXM-141GB");
  CHECK(p.pools[0].parallelism.tp == 2);
  CHECK(p.pools[1].gpu.name == "H100-SXM5-80GB");
  CHECK(p.pools[1].replicas == 4);
  CHECK(p.gpus() == 8);
}

TEST_CASE("serving reader: bad input names the key and the fix") {
  std::string e = error_of("  scheduler: fcfs\n");
  CHECK(has(e, "serving.scheduler"));
  CHECK(has(e, "vllm | sarathi | orca"));
  CHECK(has(e, "test.yaml:"));
  e = error_of("  router: nearest\n");
  CHECK(has(e, "round-robin"));
  e = error_of("  parallelism: {tp: 3}\n");
  CHECK(has(e, "serving.parallelism.tp"));
  e = error_of("  replicas: 9\n");
  CHECK(has(e, "9 GPUs"));
  e = error_of("  parallelism: {ep: 2, tp: 2}\n");
  CHECK(has(e, "mixture-of-experts"));
  e = error_of("  max_batch_token: 10\n");
  CHECK(has(e, "max_batch_tokens"));  // did-you-mean hint
  e = error_of("  disaggregation: {prefill_replicas: 1}\n");
  CHECK(has(e, "decode_replicas"));
  e = error_of("  decode_attention: tensor\n");
  CHECK(has(e, "serving.decode_attention"));
  CHECK(has(e, "vector | matrix"));
  e = error_of("  gpu_memory_utilization: 0.9\n  kv_cache_free_memory_fraction: 0.9\n");
  CHECK(has(e, "serving.kv_cache_free_memory_fraction"));
  CHECK(has(e, "keep one"));
}

TEST_CASE("serving memory: a model that does not fit is a PlanError naming the fix") {
  const auto s = testing::serving_scenario("  replicas: 1\n", "llama3.1-70b");
  testing::ListSource src({testing::request(0, 0, 10, 10)});
  try {
    testing::run_serving(s, src);
    FAIL("expected a PlanError");
  } catch (const PlanError& e) {
    CHECK(has(e.what(), "no room for the KV cache"));
    CHECK(has(e.hint(), "raise tp"));
  }
}
