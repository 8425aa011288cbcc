// Serving a multi-head latent attention model (DeepSeek-V3) prices its attention as the engines
// run it: decode absorbed, every head over the one cached latent row per token (so the cache read
// does not grow with the heads on a GPU, unlike GQA's KV heads), prefill un-absorbed with the
// cached latents up-projected first; the latent projections replace the QKV GEMM.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "models/kernel/kernel_models.hpp"
#include "serving_fixture.hpp"
#include "workloads/serving/iteration_cost.hpp"

namespace {

using namespace exasim;
namespace sv = testing::sv;

// DeepSeek-V3 in fp8 on one 8-GPU H200 node, cost model at `tp` with a bf16 KV cache.
sv::IterationCostModel cost_model(const workloads::Scenario& s, const workloads::ModelSpec& model, int tp) {
  sv::CostModelInputs in = testing::pool_cost_model(s, model).inputs();
  in.parallelism.tp = tp;
  in.kv_dtype = DType::kBf16;
  return sv::IterationCostModel(std::move(in));
}

workloads::Scenario deepseek() {
  return testing::serving_scenario("  replicas: 1\n  parallelism: {tp: 8}\n  precision: fp8\n", "deepseek-v3", 8,
                                   "H200-SXM-141GB");
}

sv::BatchShape decodes(double sequences, double context) {
  sv::BatchShape b;
  b.decodes = sequences;
  b.decode_context = b.decode_window_context = sequences * context;
  return b;
}

}  // namespace

TEST_CASE("serving MLA: the decode reads one latent row per token whatever the heads on a GPU") {
  const auto s = deepseek();
  REQUIRE(s.model.mla);
  // 64 sequences at 16k tokens: 64 x 16384 x 576 x 2 B = 1.2 GB of latents a layer, the same at
  // TP 4 (32 heads a GPU) and TP 8 (16): the cache is replicated, the heads only add math.
  const double tp4 = cost_model(s, s.model, 4).attention_time(decodes(64, 16384));
  const double tp8 = cost_model(s, s.model, 8).attention_time(decodes(64, 16384));
  CHECK(tp4 / tp8 < 1.25);
  // GQA's cache is split by KV heads: Llama 3.1 70B (8 KV heads) reads half as much at TP 8.
  const auto gqa = testing::serving_scenario("  replicas: 1\n  parallelism: {tp: 8}\n", "llama3.1-70b", 8, "H200-SXM-141GB");
  const double g4 = cost_model(gqa, gqa.model, 4).attention_time(decodes(64, 16384));
  const double g8 = cost_model(gqa, gqa.model, 8).attention_time(decodes(64, 16384));
  CHECK(g4 / g8 > 1.7);
  // Memory-bound, the time is the latent bytes at the cache's achieved bandwidth (at most HBM's
  // peak): 61 layers x 1.21 GB at 4.8 TB/s = 15.4 ms is a floor.
  const double latent_bytes = 61.0 * 64 * 16384 * 576 * 2;
  CHECK(tp8 > latent_bytes / s.cluster.gpu.hbm_bandwidth);
  CHECK(tp8 < 1.6 * latent_bytes / s.cluster.gpu.hbm_bandwidth);
}

TEST_CASE("serving MLA: speculative verification's query tokens read the latent cache once") {
  // 3 draft tokens: 4 query rows a sequence over the same cache, priced as 4 x 16 heads of one
  // kernel. At 16k tokens the cache read dominates: far below 4 separate decode steps.
  const auto s = deepseek();
  sv::CostModelInputs in = cost_model(s, s.model, 8).inputs();
  sv::SpeculativeConfig spec;
  spec.draft = s.model, spec.tokens = 3;
  in.speculative = &spec;
  const sv::IterationCostModel verify(in);
  const double one = cost_model(s, s.model, 8).attention_time(decodes(64, 16384));
  const double four = verify.attention_time(decodes(64, 16384));
  CHECK(four > one);
  CHECK(four < 1.5 * one);
  const models::MlaDims m{128, 64, 128, 512};
  const hw::GpuSpec& g = in.gpu;
  const double by_hand = models::gemm_time(g, in.kernel, DType::kBf16, 256, 512, 128, 16).time_s +
                         models::mla_decode(g, in.kernel, DType::kBf16, models::mla_decode_shape(64, 16384, 64, m)).time_s +
                         models::gemm_time(g, in.kernel, DType::kBf16, 256, 128, 512, 16).time_s;
  CHECK(four == exasim::testing::approx(61 * by_hand));
}

TEST_CASE("serving MLA: a layer's attention by hand from the MLA kernels") {
  const auto s = deepseek();
  const sv::IterationCostModel c = cost_model(s, s.model, 8);
  const auto& in = c.inputs();
  const hw::GpuSpec& g = in.gpu;
  const models::MlaDims m{128, 64, 128, 512};  // config.json: qk_nope, qk_rope, v, kv_lora
  const double heads = 128.0 / 8;
  // Decode: Q_nope into the latent (16 heads of 32 x 128 x 512), the kernel, the output back to V.
  const double decode = models::gemm_time(g, in.kernel, DType::kBf16, 32, 512, 128, heads).time_s +
                        models::mla_decode(g, in.kernel, DType::kBf16, models::mla_decode_shape(32, 3000, heads, m)).time_s +
                        models::gemm_time(g, in.kernel, DType::kBf16, 32, 128, 512, heads).time_s;
  CHECK(c.attention_time(decodes(32, 3000)) == exasim::testing::approx(61 * decode));
  // A prefill chunk of 512 tokens after 4096 cached: all 4608 latents up-projected to K_nope and V
  // (512 -> 16 x 256, fp8 weights), then MHA of Q, K 192 and V 128 over the 4608 keys.
  sv::BatchShape chunk;
  chunk.prefills.push_back({512, 4096});
  models::AttentionShape a = models::mla_prefill_shape(1, 512, heads, m);
  a.seq_kv = 4608;
  const double prefill = models::gemm_time(g, in.kernel, DType::kFp8, 4608, heads * 256, 512).time_s +
                         models::mla_prefill(g, in.kernel, DType::kBf16, a).time_s;
  CHECK(c.attention_time(chunk) == exasim::testing::approx(61 * prefill));
}

TEST_CASE("serving MLA: the latent projections are the attention's GEMMs") {
  // A larger Q latent moves the linear time by exactly its GEMMs and norm: the fused Q / KV
  // down-projection (7168 -> q_lora + 576, replicated) and Q's up-projection (q_lora -> 16 x 192).
  const auto s = deepseek();
  workloads::ModelSpec wider = s.model;
  wider.mla->q_lora_rank = 2 * s.model.mla->q_lora_rank;
  const sv::IterationCostModel base = cost_model(s, s.model, 8), more = cost_model(s, wider, 8);
  const auto& in = base.inputs();
  const double T = 2048, h = 7168, q0 = 1536, q1 = 3072;
  const auto gemm = [&](double n, double k) { return models::gemm_time(in.gpu, in.kernel, DType::kFp8, T, n, k).time_s; };
  const auto norm = [&](double cols) {
    return models::memory_op(in.gpu, in.kernel, models::MemoryOp::kRmsNorm, DType::kBf16, T, cols).time_s;
  };
  const double per_layer = (gemm(q1 + 576, h) - gemm(q0 + 576, h)) + (norm(q1) - norm(q0)) +
                           (gemm(16 * 192, q1) - gemm(16 * 192, q0));
  CHECK(more.linear_time(T, 0) - base.linear_time(T, 0) == exasim::testing::approx(61 * per_layer).epsilon(1e-9));
  CHECK(per_layer > 0);
}
