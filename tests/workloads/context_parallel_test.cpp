// Context parallelism (Megatron-Core CP: ring attention over a load-balanced split of each
// sequence; Liu et al. 2023 "Ring Attention"): each GPU keeps s/cp tokens, computes 1/cp of the
// causal attention, passes K and V around the cp ring (all-gather volume) forward and backward
// (plus dK/dV back), and reduces gradients over dp x cp.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <string>

#include "training_fixture.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_plan.hpp"
#include "workloads/training/transformer_ops.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

ModelSpec llama_like() {
  ModelSpec m = testing::gpt(4, 4096, 32, 32000);
  m.kv_heads = 8;
  m.position = PositionKind::kRope;
  m.max_seq_len = 8192;
  return m;
}

TrainingConfig cp_config(int cp, int dp) {
  TrainingConfig c = testing::config(2, 1, dp, 8);
  c.seq_len = 8192;
  c.parallelism.cp = cp;
  c.attention = AttentionKernel::kFlash;
  return c;
}

struct Totals {
  double attention_flops = 0, gemm_flops = 0;
  double ring_bytes = 0;
  int ring_ops = 0;
  std::size_t ring_group = 0, grad_group = 0;
};

Totals totals(int cp, int dp) {
  const TrainingPlan plan(llama_like(), cp_config(cp, dp), 2 * cp * dp, 8);
  const topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  const TrainingGraph g = build_training_graph(plan, {cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)});
  Totals t;
  const LayerDims d = LayerDims::from(plan.model(), plan.config());
  for (const Op& op : layer_forward(d)) {
    if (op.kind == OpKind::kAttention) t.attention_flops += op.flops;
    if (op.kind == OpKind::kGemm) t.gemm_flops += op.flops;
  }
  for (const auto& task : g.graph.tasks()) {
    if (task.comm_op == sim::kNone) continue;  // kernels and host work
    const auto& op = g.comm_ops[task.comm_op];
    const std::string label(g.graph.label(task.label));
    if (label.find("cp.") != std::string::npos) {
      t.ring_bytes = op.bytes;
      t.ring_group = op.ranks.size();
      ++t.ring_ops;
    }
    if (task.category == kDataCommTask) t.grad_group = op.ranks.size();
  }
  return t;
}

}  // namespace

TEST_CASE("context parallelism: each GPU does 1/cp of the attention and of the GEMMs") {
  const Totals one = totals(1, 4), two = totals(2, 2), four = totals(4, 1);
  // Causal attention over s: 4 b s^2 a d / 2; under cp each GPU does 1/cp of it.
  CHECK(two.attention_flops == exasim::testing::approx(one.attention_flops / 2));
  CHECK(four.attention_flops == exasim::testing::approx(one.attention_flops / 4));
  CHECK(two.gemm_flops == exasim::testing::approx(one.gemm_flops / 2));
}

TEST_CASE("context parallelism: K and V go around the ring three times per layer, over the cp group") {
  const Totals one = totals(1, 4), two = totals(2, 2);
  CHECK(one.ring_ops == 0);
  // 4 layers x 4 micro-batches x (forward K/V, backward K/V, backward dK/dV).
  const int micro_batches = 8 / 2;
  CHECK(two.ring_ops == 4 * micro_batches * 3);
  CHECK(two.ring_group == 2);
  // The whole sequence's K and V of this GPU's KV heads (8 / tp 2), bf16: 2 x b s g d x 2 bytes.
  CHECK(two.ring_bytes == exasim::testing::approx(2.0 * 1 * 8192 * 4 * 128 * 2));
  // Gradients are reduced over dp x cp = 4 ranks either way.
  CHECK(one.grad_group == 4);
  CHECK(two.grad_group == 4);
}

TEST_CASE("context parallelism: activations per GPU shrink by cp, optimizer shards over dp x cp") {
  const auto mem = [](int cp, int dp) {
    TrainingConfig c = cp_config(cp, dp);
    c.zero = 1;
    return training_memory(TrainingPlan(llama_like(), c, 2 * cp * dp, 8)).stages[0];
  };
  const StageMemory one = mem(1, 4), two = mem(2, 2);
  CHECK(two.activations == exasim::testing::approx(one.activations / 2).epsilon(0.01));
  CHECK(two.optimizer == exasim::testing::approx(one.optimizer));
  CHECK(two.weights == exasim::testing::approx(one.weights));
}

TEST_CASE("context parallelism: plans it cannot run are rejected with the reason") {
  TrainingConfig unfused = cp_config(2, 2);
  unfused.attention = AttentionKernel::kUnfused;
  CHECK_THROWS_WITH_AS(TrainingPlan(llama_like(), unfused, 8, 8), doctest::Contains("FlashAttention"), PlanError);
  TrainingConfig odd = cp_config(4, 1);
  odd.seq_len = 8188;
  CHECK_THROWS_WITH_AS(TrainingPlan(llama_like(), odd, 8, 8), doctest::Contains("2*cp"), PlanError);
}
