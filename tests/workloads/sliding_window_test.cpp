// Sliding-window attention in training (GPT-OSS alternates 128-key windows with full layers):
// which layers slide, the attention work of a sliding layer against the closed form, the
// iteration it saves, and the combinations exasim refuses rather than mis-simulate.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <string>

#include "hw/error.hpp"
#include "training_fixture.hpp"
#include "workloads/model/model_config.hpp"
#include "workloads/training/training_plan.hpp"
#include "workloads/training/training_simulation.hpp"
#include "workloads/training/transformer_ops.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

ModelSpec windowed(std::int64_t window, int pattern) {
  ModelSpec m = testing::gpt(4, 2048, 16);
  m.sliding_window = window;
  m.sliding_window_pattern = pattern;
  m.max_seq_len = 8192;
  return m;
}

TrainingConfig config_8k() {
  TrainingConfig c = testing::config(1, 1, 1, 1);
  c.seq_len = 8192;
  c.attention = AttentionKernel::kFlash;
  return c;
}

double attention_flops(const ModelSpec& m, int layer) {
  const LayerDims d = LayerDims::from(m, config_8k()).for_layer(m, layer);
  double flops = 0;
  for (const Op& op : layer_forward(d))
    if (op.kind == OpKind::kAttention) flops += op.flops;
  return flops;
}

}  // namespace

TEST_CASE("sliding window: a pattern of p keeps every p-th layer full, the others see the window") {
  const ModelSpec oss = windowed(128, 2);  // GPT-OSS: sliding layer 0, full layer 1, ...
  CHECK(oss.attention_window(0) == 128);
  CHECK(oss.attention_window(1) == 0);
  CHECK(oss.attention_window(2) == 128);
  const ModelSpec mistral = windowed(4096, 0);  // every layer slides
  CHECK(mistral.attention_window(3) == 4096);
  CHECK(testing::gpt(2, 1024, 8).attention_window(0) == 0);
  // From YAML; a pattern without a window is an error naming the key.
  const ModelSpec y = model_from_layers("m", {config::load_string(
      "{layers: 2, hidden: 1024, heads: 8, ffn: 4096, vocab: 1000, sliding_window: 128, sliding_window_pattern: 2}", "m.yaml")});
  CHECK(y.attention_window(0) == 128);
  CHECK_THROWS_WITH_AS(model_from_layers("m", {config::load_string(
                           "{layers: 2, hidden: 1024, heads: 8, ffn: 4096, vocab: 1000, sliding_window_pattern: 2}", "m.yaml")}),
                       doctest::Contains("sliding_window"), ConfigError);
}

TEST_CASE("sliding window: a sliding layer's attention does 4 d FLOPs per query and visible key") {
  const ModelSpec m = windowed(128, 2);
  const double s = 8192, w = 128, heads = 16, d = 128;
  const double band = w * (w + 1) / 2 + (s - w) * w;  // min(position + 1, w) keys per query
  CHECK(attention_flops(m, 0) == exasim::testing::approx(4 * heads * d * band));
  CHECK(attention_flops(m, 1) == exasim::testing::approx(4 * heads * d * s * s / 2));  // full causal (Megatron's s^2 / 2)
}

TEST_CASE("sliding window: the iteration is shorter by at least the attention the window skips, and cp is refused") {
  const topologies::Cluster cluster = testing::ideal_cluster(1, 1);
  auto iteration = [&](const ModelSpec& m) {
    const TrainingPlan plan(m, config_8k(), 1, 1);
    return simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}}).iteration_time_s;
  };
  ModelSpec plain = testing::gpt(4, 2048, 16);
  plain.max_seq_len = 8192;  // the same position table as windowed()'s
  const double full = iteration(plain), sliding = iteration(windowed(128, 2));
  CHECK(sliding < full);
  // Two of the four layers slide: their forward and backward attention shrink; the saving is at
  // least the forward attention FLOPs skipped at the GPU's dense peak (a lower bound on time).
  const double skipped = 2 * (attention_flops(plain, 0) - attention_flops(windowed(128, 2), 0));
  CHECK(full - sliding > skipped / cluster.gpu.peak(DType::kBf16));
  TrainingConfig cp = testing::config(1, 1, 1, 2);
  cp.seq_len = 8192;
  cp.parallelism.cp = 2;
  cp.attention = AttentionKernel::kFlash;
  CHECK_THROWS_WITH_AS(TrainingPlan(windowed(128, 2), cp, 2, 2), doctest::Contains("sliding-window"), PlanError);
}

TEST_CASE("sliding window: the gpt-oss catalog models match the model card's sizes and alternate from a sliding layer 0") {
  auto model = [](const std::string& name) { return resolve_model(config::load_string(name, "<test>"), testing::catalog(), "."); };
  const ModelSpec big = model("gpt-oss-120b"), small = model("gpt-oss-20b");
  // Model card (OpenAI, 2025): 116.83 B total / 5.13 B active; 20.9 B / 3.6 B. The card's active
  // count includes the unembedding but not the input embedding (a lookup). Not counted here: the
  // experts' and router's biases and the attention sinks (under 0.1%).
  CHECK(big.parameter_count() == exasim::testing::approx(116.83e9).epsilon(0.005));
  CHECK(big.active_parameter_count() - big.embedding_parameter_count() == exasim::testing::approx(5.13e9).epsilon(0.01));
  CHECK(small.parameter_count() == exasim::testing::approx(20.9e9).epsilon(0.005));
  CHECK(small.active_parameter_count() - small.embedding_parameter_count() == exasim::testing::approx(3.6e9).epsilon(0.01));
  CHECK(small.attention_window(0) == 128);
  CHECK(small.attention_window(23) == 0);
}
