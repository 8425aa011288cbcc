// ZeRO-3 (FSDP) with expert parallelism: the dense weights shard over the data-parallel group, the
// routed experts over their own replicas (the expert-data-parallel group), as Megatron-FSDP and
// torchtitan's FSDP2 with EP lay them out. Checked against the ZeRO paper's figures (Rajbhandari
// et al., SC'20: 3 Psi of traffic per step, 16 Psi / N_d of model states) applied to each group,
// and FSDP's gathered layers beside them, with Mixtral 8x7B's and Llama-2-7B's parameters counted
// by hand.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <map>
#include <string>

#include "graph_traffic.hpp"
#include "training_fixture.hpp"
#include "workloads/model/model_config.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_plan.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

// Mixtral 8x7B by hand: hidden 4096, 32 query / 8 KV heads of 128, 8 SwiGLU experts of 14336,
// RMSNorm, no biases, vocab 32000 untied.
constexpr double kH = 4096, kF = 14336, kE = 8, kLayers = 32, kVocab = 32000;
constexpr double kAttention = kH * (kH + 2 * 8 * 128) + kH * kH;  // QKV and output projections
constexpr double kDenseLayer = kAttention + 2 * kH + kH * kE;    // + two norms + the router
constexpr double kExpert = 3 * kH * kF;                           // gate, up, down

ModelSpec mixtral() { return resolve_model(config::load_string("mixtral-8x7b", "<test>"), testing::catalog(), "."); }

// 8 GPUs: dp 8, ep 4, so each GPU holds 2 experts a layer and shares them with one other GPU.
TrainingConfig zero3(int micro_batches) {
  TrainingConfig c = testing::config(1, 1, 8, 8 * micro_batches);
  c.seq_len = 4096;
  c.parallelism.ep = 4;
  c.attention = AttentionKernel::kFlash;
  c.zero = 3;
  return c;
}

}  // namespace

TEST_CASE("moe zero-3: every layer gathers its dense weights over dp and its experts over their replicas, 3 Psi a micro-batch") {
  const ModelSpec m = mixtral();
  const TrainingPlan plan(m, zero3(2), 8, 8);
  REQUIRE(plan.expert_replicas() == 2);
  const topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  const TrainingGraph g = build_training_graph(plan, {cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)});
  auto by_label = testing::traffic_by_label(g);
  const int per_iteration = static_cast<int>(kLayers) * 2;  // a layer per micro-batch
  for (const char* dense : {"fsdp gather (fwd)", "fsdp gather (bwd)", "fsdp reduce-scatter grads"}) {
    INFO(dense);
    CHECK(by_label[dense].count == per_iteration);
    CHECK(by_label[dense].bytes == exasim::testing::approx(2 * kDenseLayer));
    CHECK(by_label[dense].group == 8);
  }
  for (const char* expert : {"fsdp expert gather (fwd)", "fsdp expert gather (bwd)", "fsdp expert reduce-scatter grads"}) {
    INFO(expert);
    CHECK(by_label[expert].count == per_iteration);
    CHECK(by_label[expert].bytes == exasim::testing::approx(2 * (kE / 4) * kExpert));
    CHECK(by_label[expert].group == 2);
  }
}

TEST_CASE("moe zero-3: model states per GPU are 16 Psi over each group's size, and the step runs") {
  const ModelSpec m = mixtral();
  const TrainingPlan plan(m, zero3(2), 8, 8);
  const StageMemory s = training_memory(plan).stages[0];
  // Dense: every layer's dense weights, the embedding, the LM head and the final norm, over 8.
  const double dense = kLayers * kDenseLayer + 2 * kVocab * kH + kH;
  const double experts = kLayers * (kE / 4) * kExpert;  // this GPU's experts, over their 2 replicas
  const double owned = dense / 8 + experts / 2;
  CHECK(s.weights == exasim::testing::approx(2 * owned));
  CHECK(s.gradients == exasim::testing::approx(2 * owned));
  CHECK(s.optimizer == exasim::testing::approx(12 * owned));
  // Beside the shards: the layer computed and the one prefetched, whole, and one layer's gradients
  // before their reduce-scatter (FSDP's per-block wrap): 3 x 2 B x (dense + this GPU's 2 experts).
  CHECK(s.gathered == exasim::testing::approx(3 * 2 * (kDenseLayer + (kE / 4) * kExpert)));

  // ZeRO-3 holds less than ZeRO-1: its 16-bit weights and gradients are sharded too.
  TrainingConfig one = zero3(2);
  one.zero = 1;
  const StageMemory s1 = training_memory(TrainingPlan(m, one, 8, 8)).stages[0];
  CHECK(s1.weights == exasim::testing::approx(2 * (dense + experts)));  // unsharded
  CHECK(s.total() < s1.total());
}

TEST_CASE("moe zero-3: experts with a single replica (ep = dp) stay whole, and the step runs end to end") {
  ModelSpec m = mixtral();
  m.layers = 4;  // to fit 80 GB
  TrainingConfig c = zero3(2);
  c.parallelism.ep = 8;
  const TrainingPlan plan(m, c, 8, 8);
  REQUIRE(plan.expert_replicas() == 1);
  const StageMemory s = training_memory(plan).stages[0];
  const double dense = 4 * kDenseLayer + 2 * kVocab * kH + kH, experts = 4 * (kE / 8) * kExpert;
  CHECK(s.weights == exasim::testing::approx(2 * (dense / 8 + experts)));
  CHECK(s.gathered == exasim::testing::approx(3 * 2 * kDenseLayer));  // only the dense part is sharded
  const topologies::Cluster cluster = testing::dgx_a100_node();
  const TrainingGraph g = build_training_graph(plan, {cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)});
  int dense_gathers = 0, expert_collectives = 0;
  for (const auto& t : g.graph.tasks()) {
    const std::string label(g.graph.label(t.label));
    dense_gathers += label.starts_with("fsdp gather");
    expert_collectives += label.starts_with("fsdp expert");
  }
  CHECK(dense_gathers == 4 * 2 * 2);  // layers x micro-batches x (forward, backward)
  CHECK(expert_collectives == 0);
  const auto r = simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}});
  CHECK(r.iteration_time_s > 0);
  CHECK(r.memory.peak().total() == exasim::testing::approx(s.total()));
}

TEST_CASE("zero-3 gathered layers: with the optimizer on the host only the two gathered layers' weights stay, with the parameters there none") {
  // Llama-2-7B by hand: 32 layers, hidden 4096, 32 heads, SwiGLU ffn 11008, RMSNorm, no biases.
  ModelSpec m = resolve_model(config::load_string("llama2-7b", "<test>"), testing::catalog(), ".");
  const double layer = 4 * 4096.0 * 4096 + 3 * 4096.0 * 11008 + 2 * 4096;
  TrainingConfig c = testing::config(1, 1, 8, 8);
  c.zero = 3;
  c.attention = AttentionKernel::kFlash;
  CHECK(training_memory(TrainingPlan(m, c, 8, 8)).stages[0].gathered == exasim::testing::approx(3 * 2 * layer));
  c.offload = "optimizer-cpu";  // gradients stream to the host bucket by bucket (counted as gradients)
  CHECK(training_memory(TrainingPlan(m, c, 8, 8)).stages[0].gathered == exasim::testing::approx(2 * 2 * layer));
  c.offload = "params-cpu";  // ZeRO-Infinity: the gathered layers are the GPU's weights
  const StageMemory infinity = training_memory(TrainingPlan(m, c, 8, 8)).stages[0];
  CHECK(infinity.gathered == 0);
  CHECK(infinity.weights == exasim::testing::approx(2 * 2 * layer));
  c.offload = "none";
  c.zero = 2;  // nothing gathered
  CHECK(training_memory(TrainingPlan(m, c, 8, 8)).stages[0].gathered == 0);
}

// Hybrid sharding with experts (torchtitan's HSDP with EP): shard_group 8 of dp 16 makes two
// replicated copies; the experts' 4 replicas (16 / ep 4) split into the same two copies, so each
// expert's states are sharded over 2 GPUs and its gradients all-reduced across the copies.
TEST_CASE("moe hybrid sharding: experts sharded within a copy, reduced across copies, states / shard") {
  ModelSpec m = mixtral();
  m.layers = 4;
  TrainingConfig c = testing::config(1, 1, 16, 16);
  c.seq_len = 4096;
  c.parallelism.ep = 4;
  c.attention = AttentionKernel::kFlash;
  c.zero = 1;
  c.shard_group = 8;
  const TrainingPlan plan(m, c, 16, 8);
  REQUIRE(plan.expert_replicas() == 4);
  CHECK(plan.expert_shard_size() == 2);
  CHECK(plan.expert_shard_group(0) == std::vector<std::uint32_t>{0, 4});
  CHECK(plan.expert_replica_group(0) == std::vector<std::uint32_t>{0, 8});
  const double experts = 4 * (kE / 4) * kExpert;  // 2 experts a GPU, 4 layers
  const StageMemory s = training_memory(plan).stages[0];
  TrainingConfig flat = c;
  flat.shard_group = 0;
  const StageMemory f = training_memory(TrainingPlan(m, flat, 16, 8)).stages[0];
  // ZeRO-1: 12 B of Adam state per owned parameter; experts owned over 2 GPUs instead of 4.
  CHECK(s.optimizer - f.optimizer ==
        exasim::testing::approx(12 * (experts / 2 - experts / 4) + 12 * (f.parameters - experts) * (1.0 / 8 - 1.0 / 16)));
  const topologies::Cluster cluster = testing::ideal_cluster(2, 8);
  auto traffic = testing::traffic_by_label(build_training_graph(plan, {cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)}));
  CHECK(traffic["expert grads L0"].group == 2);
  CHECK(traffic["expert grads L0"].bytes == exasim::testing::approx(2 * (kE / 4) * kExpert));
  CHECK(traffic["expert grads L0 (across replicas)"].group == 2);
  CHECK(traffic["expert grads L0 (across replicas)"].bytes == exasim::testing::approx((kE / 4) * kExpert));  // the shard
  CHECK(traffic["expert weights all-gather"].group == 2);
  CHECK(traffic["dp grads L0"].group == 8);
  CHECK(traffic["dp grads L0 (across replicas)"].group == 2);
  // Copies that do not divide the experts' replicas are refused, with the numbers.
  c.parallelism.ep = 8;  // 2 expert replicas
  c.shard_group = 4;     // 4 copies
  CHECK_THROWS_WITH_AS(TrainingPlan(m, c, 16, 8), doctest::Contains("do not divide the experts' 2 replicas"), PlanError);
}
