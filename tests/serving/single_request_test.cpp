// With batching off and one request, TTFT is the prefill iteration and TPOT the decode step, both
// recomputed here by hand from the kernel models (the op list of a Llama layer in vLLM, one GPU).
#include <doctest/doctest.h>

#include "approx.hpp"

#include "models/kernel/kernel_models.hpp"
#include "serving_fixture.hpp"
#include "workloads/serving/iteration_cost.hpp"

namespace {

using namespace exasim;
using testing::request;
using testing::serving_scenario;
using models::MemoryOp;

struct Hand {
  const workloads::ModelSpec& m;
  const hw::GpuSpec& g;
  const models::KernelParams& p;
  DType w = DType::kBf16;
  DType kv = DType::kBf16;

  // Everything but attention, for T tokens, all layers; LM head for `sampled` rows.
  double linear(double T, double sampled) const {
    const double h = double(m.hidden), d = double(m.head_dimension()), H = m.heads, G = m.kv_heads, f = double(m.ffn);
    const DType a = DType::kBf16;
    // Fused residual add + RMSNorm: reads x and residual, writes residual and output (bf16), 5 FLOP/element.
    double layer = 2 * models::streaming_kernel(g, p, 4 * T * h * 2 + h * 2, 5 * T * h).time_s;
    layer += models::gemm_time(g, p, w, T, (H + 2 * G) * d, h).time_s;
    layer += models::memory_op(g, p, MemoryOp::kRope, a, T, (H + G) * d).time_s;
    layer += models::gemm_time(g, p, w, T, h, H * d).time_s;
    layer += models::gemm_time(g, p, w, T, 2 * f, h).time_s;
    layer += models::memory_op(g, p, MemoryOp::kSiluMul, a, T, f).time_s;
    layer += models::gemm_time(g, p, w, T, h, f).time_s;
    const double embed = models::memory_op(g, p, MemoryOp::kEmbedding, a, T, h).time_s;
    const double head = models::memory_op(g, p, MemoryOp::kRmsNorm, a, sampled, h).time_s +
                        models::gemm_time(g, p, a, sampled, double(m.vocab), h).time_s;
    return m.layers * layer + embed + head;
  }
  double prefill(double P) const {
    const models::AttentionShape s{1, P, P, double(m.heads), double(m.kv_heads), double(m.head_dimension()), true};
    return linear(P, 1) + m.layers * models::attention_prefill(g, p, DType::kBf16, s).time_s;
  }
  double decode(double context) const {
    const models::DecodeShape s{1, context, double(m.heads), double(m.kv_heads), double(m.head_dimension()), 16};
    return linear(1, 1) + m.layers * models::attention_decode(g, p, kv, s).time_s;
  }
};

}  // namespace

TEST_CASE("serving: one request without batching: TTFT = prefill time, TPOT = decode step time") {
  for (const char* precision : {"bf16", "fp8"}) {
    CAPTURE(precision);
    const auto s = serving_scenario(std::string("  replicas: 1\n  max_num_seqs: 1\n  cpu_overhead: 0.5 ms\n  precision: ") +
                                    precision + "\n");
    const auto& cfg = *s.serving_config;
    const Hand hand{s.model, cfg.pools[0].gpu, cfg.pools[0].kernel, cfg.precision, cfg.kv_dtype};
    const std::int64_t P = 1000, O = 50;
    const double cpu = 0.5e-3;
    testing::ListSource src({request(0, 2.0, P, O)});
    std::vector<testing::sv::RequestRecord> recs;
    const auto r = testing::run_serving(s, src, [&](const auto& rec) { recs.push_back(rec); });
    REQUIRE(recs.size() == 1);
    const double ttft = hand.prefill(double(P)) + cpu;
    double decode_sum = 0;
    for (std::int64_t i = 1; i < O; ++i) decode_sum += hand.decode(double(P + i)) + cpu;
    CHECK(recs[0].queueing_s == 0);
    CHECK(recs[0].ttft_s == exasim::testing::approx(ttft).epsilon(1e-9));
    CHECK(recs[0].tpot_s == exasim::testing::approx(decode_sum / double(O - 1)).epsilon(1e-9));
    CHECK(recs[0].e2e_s == exasim::testing::approx(ttft + decode_sum).epsilon(1e-9));
    CHECK(recs[0].output_tokens == O);
    CHECK(r.itl.mean == exasim::testing::approx(decode_sum / double(O - 1)).epsilon(1e-9));
    CHECK(r.completed == 1);
    CHECK(r.output_tokens_per_s == exasim::testing::approx(double(O) / (ttft + decode_sum)).epsilon(1e-9));
  }
}

TEST_CASE("serving: the iteration cost model's parts agree with the hand calculation") {
  const auto s = serving_scenario("  replicas: 1\n  cpu_overhead: 0\n");
  const auto& cfg = *s.serving_config;
  const Hand hand{s.model, cfg.pools[0].gpu, cfg.pools[0].kernel, cfg.precision, cfg.kv_dtype};
  testing::sv::CostModelInputs in{s.model, cfg.pools[0].gpu, cfg.pools[0].kernel, s.calibration.collective, {}, 8,
                                  cfg.pools[0].parallelism, cfg.precision, cfg.kv_dtype, 0, 0, nullptr};
  const testing::sv::IterationCostModel cost(in);
  for (const double P : {1.0, 17.0, 512.0, 4096.0}) CHECK(cost.prefill_time(P) == exasim::testing::approx(hand.prefill(P)).epsilon(1e-12));
  CHECK(cost.decode_step_time(1, 2048) == exasim::testing::approx(hand.decode(2048)).epsilon(1e-12));
  // Batching amortizes the weights: 64 decodes cost far less than 64 single steps.
  CHECK(cost.decode_step_time(64, 1024) < 0.25 * 64 * cost.decode_step_time(1, 1024));
}
