// Mixture-of-experts training (Megatron-Core, all-to-all dispatcher, expert tensor parallelism 1):
// all-to-all volume for top-k routing, expert GEMM work, parameters and gradient groups, checked
// against hand calculations on Mixtral 8x7B's shape.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include "hw/catalog.hpp"
#include "training_fixture.hpp"
#include "workloads/model/model_config.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/moe_routing.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_plan.hpp"
#include "workloads/training/training_simulation.hpp"
#include "workloads/training/model_flops.hpp"
#include "workloads/training/transformer_ops.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

ModelSpec mixtral() {
  return resolve_model(config::load_string("mixtral-8x7b", "<test>"), testing::catalog(), ".");
}

TrainingConfig moe_config(int tp, int ep, int dp) {
  TrainingConfig c = testing::config(tp, 1, dp, 2 * dp);
  c.seq_len = 4096;
  c.parallelism.ep = ep;
  c.parallelism.sequence_parallel = tp > 1;
  c.attention = AttentionKernel::kFlash;
  return c;
}

TrainingGraph graph(const TrainingPlan& plan) {
  const topologies::Cluster cluster = testing::ideal_cluster(plan.par().tp * plan.par().dp / 8 + 0, 8);
  return build_training_graph(plan, {cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)});
}

}  // namespace

TEST_CASE("moe: each layer all-to-alls top_k copies of the GPU's tokens, four times per micro-batch") {
  const ModelSpec m = mixtral();
  const TrainingPlan plan(m, moe_config(2, 8, 8), 16, 8);
  const TrainingGraph g = graph(plan);
  int a2a = 0;
  double bytes = 0;
  std::size_t group = 0;
  for (const auto& t : g.graph.tasks()) {
    if (t.comm_op == sim::kNone) continue;  // kernels and host work
    const auto& op = g.comm_ops[t.comm_op];
    if (op.kind != sim::CommKind::kAllToAll) continue;
    ++a2a;
    bytes = op.bytes;
    group = op.ranks.size();
  }
  // 32 layers x 2 micro-batches x (dispatch, combine, and both again in backward).
  CHECK(a2a == 32 * 2 * 4);
  CHECK(group == 8);
  // Tokens this GPU routes: 4096 / tp 2 (sequence parallel); 2 copies each of 4096 bf16 values.
  CHECK(bytes == exasim::testing::approx(4096.0 / 2 * 2 * 4096 * 2));
}

TEST_CASE("moe: the routed GEMMs do top_k experts' work per token, spread over the local experts") {
  const ModelSpec m = mixtral();
  const TrainingPlan plan(m, moe_config(2, 8, 8), 16, 8);
  const LayerDims d = LayerDims::from(m, plan.config()).for_layer(m, 0);
  REQUIRE(d.moe);
  double flops = 0, batch = 0;
  for (const Op& op : layer_forward(d))
    if (op.kind == OpKind::kGemm && std::string(op.name).starts_with("moe.experts_")) flops += op.flops, batch = op.batch;
  // (4096 / 2) tokens x top-2 x 3 matrices x 2 x 4096 x 14336 FLOPs, on 8 / 8 = 1 local expert.
  CHECK(flops == exasim::testing::approx(2048.0 * 2 * 3 * 2 * 4096 * 14336));
  CHECK(batch == 1);
  // The model FLOP formula counts the active experts, not all eight.
  const double dense_mlp = 2 * 4096.0 * 3 * 4096 * 14336;  // per layer per sequence of 4096 tokens, one expert
  TrainingConfig one = plan.config();
  one.micro_batch = 1;
  ModelSpec dense = m;
  dense.moe.reset();
  CHECK(model_forward_flops(m, one) - model_forward_flops(dense, one) ==
        exasim::testing::approx(32 * (dense_mlp * (2 - 1) + 2 * 4096.0 * 4096 * 8)));
}

TEST_CASE("moe: a GPU holds experts / ep whole experts, reduced over the ranks that hold the same ones") {
  const ModelSpec m = mixtral();
  const TrainingPlan plan(m, moe_config(2, 4, 8), 16, 8);
  const SharedParameters layer = layer_parameters(plan, 0);
  CHECK(layer.expert == exasim::testing::approx(2 * m.expert_parameter_count()));  // 8 experts / ep 4
  CHECK(layer.dense == exasim::testing::approx(m.layer_base_parameter_count() / 2 + m.router_parameter_count()));
  CHECK(plan.expert_replicas() == 2 * 8 / 4);
  const TrainingGraph g = graph(plan);
  bool expert_group = false;
  for (const auto& t : g.graph.tasks()) {
    if (t.category != kDataCommTask) continue;
    const std::string label(g.graph.label(t.label));
    if (label.starts_with("expert grads")) {
      CHECK(g.comm_ops[t.comm_op].ranks.size() == 4);
      expert_group = true;
    }
    if (label.starts_with("dp grads")) CHECK(g.comm_ops[t.comm_op].ranks.size() == 8);
  }
  CHECK(expert_group);
}

TEST_CASE("moe: plans Megatron-Core cannot run are refused with the reason") {
  const ModelSpec m = mixtral();
  CHECK_THROWS_WITH_AS(TrainingPlan(m, moe_config(2, 3, 8), 16, 8), doctest::Contains("experts"), PlanError);
  TrainingConfig no_sp = moe_config(2, 8, 8);
  no_sp.parallelism.sequence_parallel = false;
  CHECK_THROWS_WITH_AS(TrainingPlan(m, no_sp, 16, 8), doctest::Contains("sequence parallelism"), PlanError);
  ModelSpec dense = testing::gpt(4, 1024, 16);
  dense.max_seq_len = moe_config(1, 2, 8).seq_len;
  CHECK_THROWS_WITH_AS(TrainingPlan(dense, moe_config(1, 2, 8), 8, 8),
                       doctest::Contains("mixture-of-experts"), PlanError);
}

TEST_CASE("moe: load imbalance scales the busiest rank's expert work and all-to-all share, and is read checked") {
  const ModelSpec m = mixtral();
  TrainingConfig balanced = moe_config(2, 8, 8), skewed = balanced;
  skewed.moe_load_imbalance = 1.5;
  auto expert_flops_and_a2a = [&](const TrainingConfig& c) {
    const LayerDims d = LayerDims::from(m, c).for_layer(m, 0);
    double flops = 0, bytes = 0;
    for (const Op& op : layer_forward(d)) {
      if (op.kind == OpKind::kGemm && std::string(op.name).starts_with("moe.experts_")) flops += op.flops;
      if (op.kind == OpKind::kComm && op.group == CommGroup::kExpert) bytes = op.comm_bytes;
    }
    return std::pair{flops, bytes};
  };
  const auto [f1, b1] = expert_flops_and_a2a(balanced);
  const auto [f2, b2] = expert_flops_and_a2a(skewed);
  CHECK(f2 == exasim::testing::approx(1.5 * f1));
  CHECK(b2 == exasim::testing::approx(1.5 * b1));
  const auto training = [](const std::string& extra) {
    return read_training(config::load_string("{seq_len: 4096, global_batch: 8, " + extra + "}", "moe.yaml"), 8);
  };
  CHECK(training("moe_load_imbalance: 1.25").moe_load_imbalance == 1.25);
  CHECK_THROWS_WITH_AS(training("moe_load_imbalance: 0.9"), doctest::Contains("below 1"), ConfigError);
}

// Router logs and expert capacity (Switch Transformer / GShard token dropping, Megatron's
// --moe-expert-capacity-factor): 8 experts on 4 ranks, expert 6 gets 30 of 100 tokens, the rest
// 10. In balanced shares (tokens x 8 / 100) rank 3 holds 2.4 + 0.8: 1.6 times its share.
TEST_CASE("moe: the busiest rank's load from a routing log and an expert capacity, by hand") {
  MoeRouting log;
  log.tokens = {{10, 10, 10, 10, 10, 10, 30, 10}};
  MoeBalance b;
  b.routing = &log;
  CHECK(busiest_rank_load(b, 0, 8, 4) == exasim::testing::approx(1.6));
  CHECK(busiest_rank_load(b, 0, 8, 1) == exasim::testing::approx(1.0));  // one rank holds every expert
  b.capacity_factor = 1.25;  // expert 6 keeps 1.25 shares, drops the rest: (1.25 + 0.8) / 2
  CHECK(busiest_rank_load(b, 0, 8, 4) == exasim::testing::approx(1.025));
  b.pad_to_capacity = true;  // every expert runs its full capacity
  CHECK(busiest_rank_load(b, 0, 8, 4) == exasim::testing::approx(1.25));
  MoeBalance scalar{1.5};
  CHECK(busiest_rank_load(scalar, 3, 8, 4) == 1.5);
  scalar.capacity_factor = 1.2;
  CHECK(busiest_rank_load(scalar, 3, 8, 4) == exasim::testing::approx(1.2));
  scalar.capacity_factor = 2.0;
  CHECK(busiest_rank_load(scalar, 3, 8, 4) == exasim::testing::approx(1.5));
}

TEST_CASE("moe: a routing trace sets each layer's imbalance, bad traces are refused with file, line and fix") {
  const ModelSpec m = mixtral();  // 32 MoE layers, 8 experts
  const std::string dir = (std::filesystem::temp_directory_path() / "exasim-moe-routing").string();
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  std::string csv = "layer,expert,tokens\n";
  for (int l = 0; l < 32; ++l)
    for (int e = 0; e < 8; ++e) csv += std::to_string(l) + "," + std::to_string(e) + "," + (l == 0 && e == 6 ? "30" : "10") + "\n";
  const std::string good = write("good.csv", csv);
  TrainingConfig c = moe_config(2, 4, 8);
  c.moe_routing = read_moe_routing(good);
  const TrainingPlan plan(m, c, 16, 8);
  // Layer 0 (expert 6 on rank 3 of ep 4): (30 + 10) x 8 / 100 tokens over 2 experts = 1.6
  // shares; other layers: (10 + 10) x 8 / 80 / 2 = 1.
  CHECK(LayerDims::from(m, c).for_layer(m, 0).imbalance == exasim::testing::approx(1.6));
  CHECK(LayerDims::from(m, c).for_layer(m, 1).imbalance == exasim::testing::approx(1.0));

  const auto training = [&](const std::string& extra) {
    return read_training(config::load_string("{seq_len: 4096, global_batch: 8, " + extra + "}", dir + "/scenario.yaml"), 8);
  };
  CHECK(training("moe_routing_trace: good.csv").moe_routing != nullptr);  // relative to the scenario's folder
  CHECK(training("moe_capacity_factor: 1.25, moe_pad_to_capacity: true").moe_pad_to_capacity);
  CHECK_THROWS_WITH_AS(training("moe_routing_trace: good.csv, moe_load_imbalance: 1.2"), doctest::Contains("not both"), ConfigError);
  CHECK_THROWS_WITH_AS(training("moe_pad_to_capacity: true"), doctest::Contains("needs moe_capacity_factor"), ConfigError);
  CHECK_THROWS_WITH_AS(training("moe_capacity_factor: 0"), doctest::Contains("must be > 0"), ConfigError);
  try {
    read_moe_routing(write("bad.csv", "layer,expert,tokens\n0,0,10\n0,1,ten\n"));
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.where().line == 3);
    CHECK(std::string(e.what()).find("\"ten\" is not a count") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(read_moe_routing(write("header.csv", "l,e,t\n")), doctest::Contains("header"), ConfigError);
  CHECK_THROWS_AS(read_moe_routing(dir + "/missing.csv"), IoError);
  TrainingConfig partial = c;
  partial.moe_routing = read_moe_routing(write("partial.csv", "layer,expert,tokens\n0,0,1\n"));
  CHECK_THROWS_WITH_AS(TrainingPlan(m, partial, 16, 8), doctest::Contains("experts' tokens for MoE layer 0"), PlanError);
}

// MoE parallel folding with expert tensor parallelism (Megatron-Core: ETP fastest, then EP, then
// expert-DP over the tp x cp x dp ranks): each expert's MLP split over etp GPUs that all-gather
// the tokens they received and reduce-scatter the outputs. The work per GPU is that of etp = 1
// with etp times the ranks per expert group; the weights per GPU shrink by etp.
TEST_CASE("moe: expert tensor parallelism splits each expert's MLP, with its own gather and reduce-scatter") {
  const ModelSpec m = mixtral();  // hidden 4096, 8 experts of ffn 14336, top-2
  TrainingConfig folded = moe_config(2, 4, 8);
  folded.parallelism.etp = 2;
  const TrainingConfig flat = moe_config(2, 8, 8);
  const TrainingPlan plan(m, folded, 16, 8);
  CHECK(plan.etp_group(0) == std::vector<std::uint32_t>{0, 1});
  CHECK(plan.ep_group(0) == std::vector<std::uint32_t>{0, 2, 4, 6});
  CHECK(plan.expert_dp_group(0) == std::vector<std::uint32_t>{0, 8});
  CHECK(plan.expert_replicas() == 2);
  auto expert_work = [&](const TrainingConfig& c, double* etp_bytes, std::size_t* etp_ops) {
    const LayerDims d = LayerDims::from(m, c).for_layer(m, 0);
    double flops = 0;
    for (const Op& op : layer_forward(d)) {
      if (op.kind == OpKind::kGemm && std::string(op.name).starts_with("moe.experts_")) flops += op.flops;
      if (op.kind == OpKind::kComm && op.group == CommGroup::kExpertTensor) *etp_bytes = op.comm_bytes, ++*etp_ops;
    }
    return flops;
  };
  double b1 = 0, b2 = 0;
  std::size_t n1 = 0, n2 = 0;
  CHECK(expert_work(folded, &b2, &n2) == exasim::testing::approx(expert_work(flat, &b1, &n1)));
  CHECK(n1 == 0);
  CHECK(n2 == 2);  // all-gather before the experts, reduce-scatter after
  // The gathered tokens: both ranks' copies (4096 / tp 2 tokens x top-2 each), bf16 rows of 4096.
  CHECK(b2 == exasim::testing::approx(2.0 * (4096 / 2) * 2 * 4096 * 2));
  // A GPU holds 8 / ep 4 = 2 experts, half of each.
  CHECK(layer_parameters(plan, 0).expert == exasim::testing::approx(2 * m.expert_parameter_count() / 2));
  // It simulates, and agrees with itself when every rank is simulated (groups tile the stage).
  const topologies::Cluster cluster = testing::ideal_cluster(2, 8);
  TrainingConfig small = folded;
  small.zero = 1;  // Adam's states sharded and shorter sequences: Mixtral fits on 16 GPUs
  small.seq_len = 2048;
  const TrainingPlan p(m, small, 16, 8);
  const TrainingResult r = simulate_training({p, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}});
  const TrainingResult all = simulate_training({p, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}, {}, {true, {}}});
  CHECK(all.iteration_time_s == exasim::testing::approx(r.iteration_time_s).epsilon(1e-12));
  // Refused where it cannot run.
  TrainingConfig bad = folded;
  bad.parallelism.etp = 3;
  CHECK_THROWS_WITH_AS(TrainingPlan(m, bad, 16, 8), doctest::Contains("does not divide"), PlanError);
  bad.parallelism.etp = 16;
  bad.parallelism.ep = 1;
  CHECK_THROWS_AS(TrainingPlan(m, bad, 16, 8), PlanError);
  CHECK(read_training(config::load_string("{seq_len: 4096, global_batch: 8, parallelism: {tp: 2, ep: 2, etp: 2}}", "t.yaml"), 8)
            .parallelism.etp == 2);
}

// The expert all-to-alls carry the tokens the permutation produced and the experts' outputs:
// nothing of the same micro-batch can run beside them (Megatron-Core without its 1F1B A2A
// overlap). tp_comm_overlap (Transformer Engine userbuffers) pipelines only TP collectives with
// their GEMMs, so with TP 1 it changes nothing. (It once let every all-to-all run beside the
// kernels producing its tokens: 13-25% of a Qwen3 MoE iteration hidden that Megatron shows.)
TEST_CASE("moe: the all-to-alls wait for their tokens and the experts for them, tp_comm_overlap or not") {
  ModelSpec m = testing::gpt(4, 4096, 32, 8);
  m.gated_mlp = true;
  m.moe = MoeSpec{8, 2, 0, 4096, 0};  // 8 experts of ffn 4096, top-2, every layer routed
  const topologies::Cluster cluster = testing::dgx_a100_node();
  const models::KernelParams k = models::KernelParams::defaults_for(cluster.gpu);
  TrainingConfig c = moe_config(1, 8, 8);
  m.max_seq_len = c.seq_len;
  auto run = [&](bool overlap) {
    c.tp_comm_overlap = overlap;
    return simulate_training({TrainingPlan(m, c, 8, 8), cluster, k, {}, {}});
  };
  const TrainingResult plain = run(false), overlapped = run(true);
  CHECK(overlapped.iteration_time_s == exasim::testing::approx(plain.iteration_time_s).epsilon(1e-12));
  // No kernel of GPU 0 runs while one of its all-to-alls does.
  const sim::ExecGraph& g = overlapped.graph->graph;
  const sim::Timeline& tl = *overlapped.timeline;
  const auto device = [&](sim::TaskId id) { return g.streams()[g.task(id).stream].device; };
  const sim::DeviceId gpu0 = device(0);
  double a2a = 0, beside = 0;
  int count = 0;
  for (sim::TaskId a = 0; a < g.task_count(); ++a) {
    const sim::Task t = g.task(a);
    if (t.comm_op == sim::kNone || device(a) != gpu0) continue;
    if (overlapped.graph->comm_ops[t.comm_op].kind != sim::CommKind::kAllToAll) continue;
    ++count;
    a2a += tl[a].end - tl[a].start;
    for (sim::TaskId k2 = 0; k2 < g.task_count(); ++k2)
      if (g.task(k2).kind == sim::TaskKind::kCompute && device(k2) == gpu0)
        beside += std::max(0.0, std::min(tl[a].end, tl[k2].end) - std::max(tl[a].start, tl[k2].start));
  }
  CHECK(count == 4 * 2 * 4);  // layers x micro-batches x (dispatch, combine, and both in backward)
  REQUIRE(a2a > 0);
  CHECK(beside == 0);
}

// Megatron-Core's all-to-all dispatcher (token_dispatcher.py): before the dispatch the EP ranks
// all-gather their token counts per expert (the all-to-all's split sizes); after it the received
// tokens, grouped by source rank, are re-ordered by local expert (sort_chunks_by_idxs) and
// restored before the combine, and both again in the backward. With one local expert there is
// nothing to re-order.
TEST_CASE("moe: token counts gathered over EP, tokens sorted by local expert around the grouped GEMM") {
  const ModelSpec m = mixtral();
  for (const int ep : {4, 8}) {
    const TrainingPlan plan(m, moe_config(2, ep, 8), 16, 8);
    const LayerDims d = LayerDims::from(m, plan.config()).for_layer(m, 0);
    double counts = 0, sorted = 0, sorts = 0;
    for (const std::vector<Op>& pass : {layer_forward(d), layer_backward(d)})
      for (const Op& op : pass) {
        const std::string name(op.name);
        if (name == "ep.token_counts") counts += op.comm_bytes;
        if (name.find("sort_chunks") != std::string::npos) sorted += op.bytes, ++sorts;
      }
    INFO("ep = ", ep);
    CHECK(counts == exasim::testing::approx(ep * 8.0 * 8));  // ep ranks x 8 experts x int64, forward only
    // Each rank's 2048 tokens x top-2 copies of 4096 bf16 values, read and written, four times.
    CHECK(sorts == (ep < 8 ? 4 : 0));
    CHECK(sorted == exasim::testing::approx(ep < 8 ? 4 * 2 * 2048.0 * 2 * 4096 * 2 : 0));
  }
}

TEST_CASE("moe: the token-permute kernels are gathers, at the permute bandwidth a calibration fitted") {
  const ModelSpec m = mixtral();
  const TrainingPlan plan(m, moe_config(2, 4, 8), 16, 8);
  const LayerDims d = LayerDims::from(m, plan.config()).for_layer(m, 0);
  int gathers = 0;
  for (const std::vector<Op>& pass : {layer_forward(d), layer_backward(d)})
    for (const Op& op : pass) {
      const std::string name(op.name);
      const bool permute = name.find("permute") != std::string::npos || name.find("sort_chunks") != std::string::npos;
      CAPTURE(name);
      CHECK(op.gather == permute);
      gathers += op.gather ? 1 : 0;
    }
  // permute, sort_chunks, unsort_chunks, unpermute, each forward and backward (4 local experts)
  CHECK(gathers == 8);
  // The step takes longer when the gathers reach a quarter of HBM than at the streaming kernels' fraction.
  const topologies::Cluster cluster = testing::ideal_cluster(2, 8);
  models::KernelParams p = models::KernelParams::defaults_for(cluster.gpu);
  const auto busy = [&](const models::KernelParams& k) {
    double s = 0;
    const auto built = build_training_graph(plan, {cluster.gpu, k});  // tasks() views it: keep it alive
    for (const sim::Task& t : built.graph.tasks()) s += t.duration;
    return s;
  };
  const double streaming = busy(p);
  p.gather_efficiency = p.memory_op_efficiency / 4;
  CHECK(busy(p) > streaming);
}
