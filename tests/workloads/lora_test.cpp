// LoRA fine-tuning (training.lora): the frozen weights get no gradients, so a layer's backward
// runs only its input-gradient GEMMs (as many FLOPs as its forward's) plus the adapters'; only
// the adapters have gradients and Adam states. Checked against the closed forms.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <map>
#include <string>
#include <string_view>

#include "graph_traffic.hpp"
#include "training_fixture.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_plan.hpp"
#include "workloads/training/training_simulation.hpp"
#include "workloads/training/transformer_ops.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

double gemm_flops(const std::vector<Op>& ops, bool adapters) {
  double f = 0;
  for (const Op& op : ops)
    if (op.kind == OpKind::kGemm && op.name.starts_with("lora.") == adapters) f += op.flops;
  return f;
}

TrainingConfig lora_config(int tp, int dp, int rank) {
  TrainingConfig c = testing::config(tp, 1, dp, 8 * dp);
  c.lora = LoraConfig{rank, true, true, true, true};
  return c;
}

}  // namespace

TEST_CASE("LoRA: a frozen layer's backward GEMMs are its forward's (input gradients only), adapters aside") {
  const ModelSpec m = testing::gpt(4, 2048, 16);
  for (int tp : {1, 4}) {
    CAPTURE(tp);
    const TrainingConfig c = lora_config(tp, 1, 16);
    const LayerDims d = LayerDims::from(m, c);
    const std::vector<Op> fwd = layer_forward(d), bwd = layer_backward(d);
    // Base GEMMs of a GPT layer per GPU: 2 T (h 3h + h h + h 4h + 4h h) / t = 24 T h^2 / t.
    const double T = 2048, h = 2048, r = 16;
    CHECK(gemm_flops(fwd, false) == exasim::testing::approx(24 * T * h * h / tp));
    CHECK(gemm_flops(bwd, false) == exasim::testing::approx(24 * T * h * h / tp));  // no weight gradients
    for (const Op& op : bwd) CHECK_FALSE((op.weight_grad && !op.name.starts_with("lora.")));
    for (const Op& op : fwd) CHECK(op.activation_precision == op.name.starts_with("lora."));  // adapters in 16 bits
    // Adapters: per target 2 T r (in + out) forward, twice that backward (dB, dZ, dA, dX).
    const double adapters = 2 * T * r * ((h + 3 * h / tp) + (h / tp + h) + (h + 4 * h / tp) + (4 * h / tp + h));
    CHECK(gemm_flops(fwd, true) == exasim::testing::approx(adapters));
    CHECK(gemm_flops(bwd, true) == exasim::testing::approx(2 * adapters));
    // Without LoRA the backward does twice the forward's GEMM work.
    const LayerDims full = LayerDims::from(m, testing::config(tp, 1, 1, 8));
    CHECK(gemm_flops(layer_backward(full), false) == exasim::testing::approx(2 * gemm_flops(layer_forward(full), false)));
  }
}

TEST_CASE("LoRA: only the adapters have gradients and optimizer states, the weights stay 16-bit") {
  const ModelSpec m = testing::gpt(8, 2048, 16);
  const int rank = 8, dp = 8;
  TrainingConfig c = lora_config(1, dp, rank);
  c.lora->attn_out = c.lora->mlp_up = c.lora->mlp_down = false;  // NeMo's default: QKV only
  c.zero = 1;
  const TrainingPlan plan(m, c, dp, 8);
  const StageMemory s = training_memory(plan).stages[0];
  const double adapters = 8 * rank * (2048.0 + 3 * 2048.0);  // per layer r (h + 3h), 8 layers
  CHECK(stage_trainable_parameters(plan, 0).total() == exasim::testing::approx(adapters));
  CHECK(s.weights == exasim::testing::approx(2 * s.parameters + 2 * adapters));
  CHECK(s.gradients == exasim::testing::approx(2 * adapters));
  CHECK(s.optimizer == exasim::testing::approx(12 * adapters / dp));  // ZeRO-1 shards them
}

TEST_CASE("LoRA: what it is not simulated with is refused by the plan") {
  const ModelSpec m = testing::gpt(8, 2048, 16);
  ModelSpec moe = m;
  moe.moe = MoeSpec{};
  moe.moe->experts = 8;
  moe.moe->top_k = 2;
  CHECK_THROWS_WITH_AS(TrainingPlan(moe, lora_config(1, 8, 8), 8, 8), doctest::Contains("LoRA on mixture-of-experts layers"), PlanError);
}

// FSDP with LoRA (as QLoRA-style fine-tuning of large models runs it): the frozen 16-bit weights
// and the adapters are sharded over the data-parallel GPUs and gathered layer by layer for each
// forward and backward; only the adapters have gradients, so only they are reduce-scattered.
TEST_CASE("LoRA with ZeRO-3: frozen weights and adapters sharded and gathered, only the adapters' gradients reduced") {
  const ModelSpec m = testing::gpt(8, 2048, 16);
  const int rank = 8, dp = 8, micro_batches = 8;
  TrainingConfig c = lora_config(1, dp, rank);
  c.lora->attn_out = c.lora->mlp_up = c.lora->mlp_down = false;  // QKV only
  c.zero = 3;
  const TrainingPlan plan(m, c, dp, 8);
  const double layer = m.layer_parameter_count(), a = rank * (2048.0 + 3 * 2048.0);  // per layer
  const StageMemory s = training_memory(plan).stages[0];
  CHECK(s.weights == exasim::testing::approx(2 * (s.parameters + 8 * a) / dp));
  CHECK(s.gradients == exasim::testing::approx(2 * 8 * a / dp));
  CHECK(s.optimizer == exasim::testing::approx(12 * 8 * a / dp));
  CHECK(s.gathered == exasim::testing::approx(2 * 2 * (layer + a) + 2 * a));  // two layers' weights, one's adapter gradients
  const topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  const TrainingGraph g = build_training_graph(plan, {cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)});
  auto traffic = testing::traffic_by_label(g);
  CHECK(traffic["fsdp gather (fwd)"].count == 8 * micro_batches);
  CHECK(traffic["fsdp gather (bwd)"].count == 8 * micro_batches);
  CHECK(traffic["fsdp reduce-scatter grads"].count == 8 * micro_batches);
  CHECK(traffic["fsdp gather (fwd)"].bytes == exasim::testing::approx(2 * (layer + a)));
  CHECK(traffic["fsdp reduce-scatter grads"].bytes == exasim::testing::approx(2 * a));
  // Against full ZeRO-3 training of the same model: no weight gradients to compute or reduce.
  TrainingConfig full = c;
  full.lora.reset();
  const auto run = [&](const TrainingConfig& config) {
    const TrainingPlan p(m, config, dp, 8);
    return simulate_training({p, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}}).iteration_time_s;
  };
  CHECK(run(c) < run(full));
}

// The distributed optimizer (ZeRO-1) updates the adapters only, so only they are all-gathered after
// the step; with overlap_param_gather that happens layer by layer in the next forward.
TEST_CASE("LoRA with overlap_param_gather: each layer's adapters gathered before its first forward") {
  const ModelSpec m = testing::gpt(8, 2048, 16);
  const int rank = 8, dp = 8;
  TrainingConfig c = lora_config(1, dp, rank);
  c.lora->attn_out = c.lora->mlp_up = c.lora->mlp_down = false;  // QKV only
  c.zero = 1;
  c.overlap_param_gather = true;
  const TrainingPlan plan(m, c, dp, 8);
  const topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  const TrainingGraph g = build_training_graph(plan, {cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)});
  auto traffic = testing::traffic_by_label(g);
  CHECK(traffic["dp weights all-gather (next forward)"].count == 8);  // one per layer, none for the frozen embedding and head
  CHECK(traffic["dp weights all-gather (next forward)"].bytes == exasim::testing::approx(2 * rank * (2048.0 + 3 * 2048.0)));
  CHECK(traffic.count("dp weights all-gather") == 0);
}
