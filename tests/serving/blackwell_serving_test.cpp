// Quantized serving on Blackwell/Hopper: NVFP4 weight bytes, and the tensor-core GQA decode
// attention of TensorRT-LLM (decode_attention: matrix), each against a hand calculation.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "models/kernel/kernel_models.hpp"
#include "serving_fixture.hpp"
#include "workloads/serving/iteration_cost.hpp"
#include "workloads/serving/serving_memory.hpp"

namespace {

using namespace exasim;
namespace sv = testing::sv;

sv::IterationCostModel cost_model(const workloads::Scenario& s) {
  const auto& cfg = *s.serving_config;
  const auto& pool = cfg.pools[0];
  sv::CostModelInputs in{s.model, pool.gpu, pool.kernel, s.calibration.collective, {}, 8, pool.parallelism,
                         cfg.precision, cfg.kv_dtype, 0, 0, nullptr, cfg.decode_attention_matrix};
  return sv::IterationCostModel(in);
}

}  // namespace

TEST_CASE("serving memory: NVFP4 weights are 0.5625 B per decoder weight, embedding and LM head stay 16 bit") {
  const auto s = testing::serving_scenario("  replicas: 1\n  precision: fp4\n  kv_cache_dtype: fp8\n", "llama3.1-70b", 8, "B200");
  const auto& m = s.model;
  const double outer = m.embedding_parameter_count() + m.head_parameter_count();
  // e2m1 values (4 bit) + one e4m3 scale (8 bit) per 16 values = 4.5 bit per weight.
  const double hand = (m.parameter_count() - outer) * 4.5 / 8 + outer * 2;
  const sv::ReplicaMemory mem = sv::replica_memory(m, s.serving_config->pools[0], *s.serving_config);
  CHECK(mem.weights_bytes == exasim::testing::approx(hand).epsilon(1e-9));
  // Llama 3.1 70B: 42-44 GB, not the 35 GB of 0.5 B for every parameter.
  CHECK(mem.weights_bytes > 42e9);
  CHECK(mem.weights_bytes < 44e9);
  // fp8 weights: 1 B per decoder weight, 2 B for embedding and head.
  const auto s8 = testing::serving_scenario("  replicas: 1\n  precision: fp8\n", "llama3.1-70b", 8, "B200");
  const sv::ReplicaMemory mem8 = sv::replica_memory(m, s8.serving_config->pools[0], *s8.serving_config);
  CHECK(mem8.weights_bytes == exasim::testing::approx(m.parameter_count() - outer + 2 * outer).epsilon(1e-9));
}

TEST_CASE("serving: tensor-core GQA decode attention streams the fp8 KV cache at the HBM rate") {
  // Llama 3.1 70B on one B200, fp8 KV: 400 sequences at 1024 tokens of context.
  const std::string body = "  replicas: 1\n  precision: fp4\n  kv_cache_dtype: fp8\n";
  const auto vec = testing::serving_scenario(body, "llama3.1-70b", 8, "B200");
  const auto mat = testing::serving_scenario(body + "  decode_attention: matrix\n", "llama3.1-70b", 8, "B200");
  REQUIRE(mat.serving_config->decode_attention_matrix);
  REQUIRE_FALSE(vec.serving_config->decode_attention_matrix);
  sv::BatchShape b;
  b.decodes = 400;
  b.decode_context = 400 * 1024.0;
  const double t_matrix = cost_model(mat).attention_time(b);
  const double t_vector = cost_model(vec).attention_time(b);
  // Hand: K and V of 8 heads x 128 dims x 1 B per token and layer, 80 layers, read once at
  // 8 TB/s x the HBM efficiency.
  const auto& pool = mat.serving_config->pools[0];
  const double bytes = 2.0 * 80 * 8 * 128 * 1 * 400 * 1024;
  const double hbm = bytes / (pool.gpu.hbm_bandwidth * pool.kernel.hbm_efficiency);
  CHECK(t_matrix >= hbm);
  CHECK(t_matrix < 1.1 * hbm);  // launches and the split reduction on top
  // The CUDA-core kernel multiplies 8 query heads per K/V row on the vector units: slower.
  CHECK(t_vector > 1.3 * t_matrix);
}

TEST_CASE("serving memory: TensorRT-LLM's free-memory fraction takes its share of what weights and workspace leave") {
  const std::string body = "  replicas: 1\n  precision: fp8\n  kv_cache_dtype: fp8\n";
  const auto trt = testing::serving_scenario(body + "  kv_cache_free_memory_fraction: 0.95\n", "llama3.1-70b", 8,
                                             "H200-SXM-141GB");
  const auto vllm = testing::serving_scenario(body + "  gpu_memory_utilization: 0.95\n", "llama3.1-70b", 8,
                                              "H200-SXM-141GB");
  const auto& pool = trt.serving_config->pools[0];
  const sv::ReplicaMemory t = sv::replica_memory(trt.model, pool, *trt.serving_config);
  const sv::ReplicaMemory v = sv::replica_memory(vllm.model, vllm.serving_config->pools[0], *vllm.serving_config);
  const double hbm = pool.gpu.hbm_capacity_bytes;
  // Hand: 0.95 (HBM - weights - workspace - runtime) vs 0.95 HBM - weights - workspace - runtime.
  CHECK(t.kv_bytes == exasim::testing::approx(0.95 * (hbm - t.weights_bytes - t.workspace_bytes - t.runtime_bytes)));
  CHECK(v.kv_bytes == exasim::testing::approx(0.95 * hbm - v.weights_bytes - v.workspace_bytes - v.runtime_bytes));
  // The difference is 5% of what the model and runtime hold.
  CHECK(t.kv_bytes - v.kv_bytes ==
        exasim::testing::approx(0.05 * (t.weights_bytes + t.workspace_bytes + t.runtime_bytes)).epsilon(1e-9));
}
