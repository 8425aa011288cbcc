// ZeRO communication volume per GPU against the ZeRO paper (Rajbhandari et al., SC'20, Section 7):
// data parallelism moves 2 Psi per step (reduce-scatter + all-gather of an all-reduce), ZeRO-1/2
// the same 2 Psi, ZeRO-3 3 Psi (a weight all-gather in forward and in backward, a gradient
// reduce-scatter), all per micro-batch for ZeRO-3.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "sim/net/analytical_network.hpp"
#include "training_fixture.hpp"
#include "hw/error.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

// Bytes each GPU sends over its data-parallel groups in the plan's graph (nccl-tests bus factor).
double dp_bus_bytes(const TrainingPlan& plan, const topologies::Cluster& cluster) {
  const TrainingGraph g = build_training_graph(plan, {cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)});
  double traffic = 0;
  for (const auto& t : g.graph.tasks()) {
    if (t.category != kDataCommTask) continue;
    const auto& op = g.comm_ops[t.comm_op];
    traffic += op.bytes * models::bus_factor(sim::to_collective(op.kind), static_cast<int>(op.ranks.size()));
  }
  return traffic;
}

// Bytes each GPU sends over the data-parallel group in one iteration (nccl-tests bus factor).
double dp_traffic(int zero, int micro_batches, double* layer_params = nullptr,
                  models::Recompute recompute = models::Recompute::kNone) {
  ModelSpec model = testing::gpt(4, 2048, 16, 8);  // tiny vocabulary and no position table: layers dominate
  model.position = PositionKind::kRope;
  TrainingConfig cfg = testing::config(1, 1, 8, 8 * micro_batches);
  cfg.zero = zero;
  cfg.recompute = recompute;
  const topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  const TrainingPlan plan(model, cfg, 8, 8);
  if (layer_params) *layer_params = model.layer_parameter_count();
  return dp_bus_bytes(plan, cluster);
}

}  // namespace

TEST_CASE("ZeRO-3 moves 1.5 times the data-parallel volume, ZeRO-1 and 2 the same") {
  double psi_layer = 0;
  const double ddp = dp_traffic(0, 1, &psi_layer);
  const double n = 8;
  // 2 Psi (n-1)/n bytes of 16-bit gradients, Psi = 4 layers (+ a tiny embedding).
  CHECK(ddp == exasim::testing::approx(2 * (n - 1) / n * 2 * 4 * psi_layer).epsilon(0.01));
  CHECK(dp_traffic(1, 1) == exasim::testing::approx(ddp).epsilon(0.01));
  CHECK(dp_traffic(2, 1) == exasim::testing::approx(ddp).epsilon(0.01));
  CHECK(dp_traffic(3, 1) == exasim::testing::approx(1.5 * ddp).epsilon(0.02));
  // ZeRO-3 repeats its gathers and reduce-scatters for every micro-batch; DDP reduces once.
  CHECK(dp_traffic(0, 4) == exasim::testing::approx(ddp).epsilon(0.01));
  CHECK(dp_traffic(3, 4) == exasim::testing::approx(4 * 1.5 * ddp).epsilon(0.02));
  // A full recompute gathers the weights its backward then uses: still 3 Psi, not 4.
  CHECK(dp_traffic(3, 1, nullptr, models::Recompute::kFull) == exasim::testing::approx(1.5 * ddp).epsilon(0.02));
}

TEST_CASE("ZeRO-3 weight gathers overlap the previous layer") {
  const ModelSpec model = testing::gpt(8, 4096, 32, 8);
  TrainingConfig cfg = testing::config(1, 1, 8, 8);
  cfg.zero = 3;
  const topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  const TrainingPlan plan(model, cfg, 8, 8);
  const auto r = simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}});
  // With an ideal network the gathers cost nothing and the iteration is pure compute.
  CHECK(r.breakdown.exposed_comm < 0.01 * r.iteration_time_s);
  // On NVLink at a rate where the 3 x 8 collectives take half the compute, each gather runs
  // while the layer before computes (prefetch depth one): what shows is about the first gather
  // and the last reduce-scatter, 2 of the 24 (2.6 measured; the previous lowering chained each gather after
  // its predecessor layer's end and exposed every forward gather: 8 of 24).
  topologies::Cluster nvlink = cluster;
  const double comm_s = 0.5 * r.breakdown.compute;
  // The gathers and reduce-scatters (and a 4-byte norm all-reduce) at that rate.
  nvlink.intra.bandwidth = dp_bus_bytes(plan, cluster) / comm_s;
  const auto slow = simulate_training({plan, nvlink, models::KernelParams::defaults_for(cluster.gpu), {}, {}});
  CHECK(slow.breakdown.exposed_comm > 1.0 / 24 * comm_s);
  CHECK(slow.breakdown.exposed_comm < 3.0 / 24 * comm_s);
}

// Hybrid sharding (FSDP HYBRID_SHARD, ZeRO++ hpZ): ZeRO-3 over groups of g = 8 of n = 32 replicas.
// Per micro-batch each GPU gathers the weights twice and reduce-scatters the gradients inside
// its group (3 Psi (g-1)/g on the bus), then all-reduces its 1/g shard of the gradients over the
// n/g groups (2 (r-1)/r Psi/g); its states are 16 Psi / g (ZeRO paper, Section 5, with N_d = g).
TEST_CASE("hybrid sharding: ZeRO-3 inside groups of 8, the shard's gradients all-reduced across groups") {
  ModelSpec model = testing::gpt(4, 2048, 16, 8);
  model.position = PositionKind::kRope;
  TrainingConfig cfg = testing::config(1, 1, 32, 32);
  cfg.zero = 3;
  cfg.shard_group = 8;
  const topologies::Cluster cluster = testing::ideal_cluster(4, 8);
  const TrainingPlan plan(model, cfg, 32, 8);
  CHECK(plan.shard_size() == 8);
  CHECK(plan.shard_replicas() == 4);
  CHECK(plan.shard_group(0) == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(plan.replica_group(0) == std::vector<std::uint32_t>{0, 8, 16, 24});
  const TrainingGraph g = build_training_graph(plan, {cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)});
  double inside = 0, across = 0;
  for (const auto& t : g.graph.tasks()) {
    if (t.category != kDataCommTask) continue;
    const auto& op = g.comm_ops[t.comm_op];
    const double bus = op.bytes * models::bus_factor(sim::to_collective(op.kind), static_cast<int>(op.ranks.size()));
    if (op.ranks.size() == 8) inside += bus;
    if (op.ranks.size() == 4) across += bus;
    CHECK((op.ranks.size() == 8 || op.ranks.size() == 4 || op.bytes <= 8));  // or the 4-byte norm over all 32
  }
  const double psi = 4 * model.layer_parameter_count();  // + a tiny embedding
  CHECK(inside == exasim::testing::approx(3 * 2 * psi * 7.0 / 8).epsilon(0.02));
  CHECK(across == exasim::testing::approx(2 * 3.0 / 4 * 2 * psi / 8).epsilon(0.02));
  // States per GPU: 16 Psi / 8, not / 32.
  const MemoryReport mem = training_memory(plan);
  const double states = mem.stages[0].weights + mem.stages[0].gradients + mem.stages[0].optimizer;
  CHECK(states == exasim::testing::approx(16 * mem.stages[0].parameters / 8).epsilon(1e-9));
}

TEST_CASE("hybrid sharding keeps ZeRO-3's gathers on NVLink: faster than sharding over every node on a slow network") {
  const ModelSpec model = testing::gpt(8, 4096, 32, 8);
  TrainingConfig cfg = testing::config(1, 1, 32, 32);
  cfg.zero = 3;
  topologies::Cluster cluster = testing::ideal_cluster(4, 8);
  cluster.intra.bandwidth = 300e9;  // NVLink-class inside the node
  cluster.inter->nic.bandwidth = 1e9;  // a slow network between nodes: communication sets the pace
  const models::KernelParams k = models::KernelParams::defaults_for(cluster.gpu);
  const TrainingPlan flat(model, cfg, 32, 8);
  cfg.shard_group = 8;
  const TrainingPlan hybrid(model, cfg, 32, 8);
  const auto f = simulate_training({flat, cluster, k, {}, {}});
  const auto h = simulate_training({hybrid, cluster, k, {}, {}});
  // Across nodes hybrid sharding moves only the gradient all-reduce of each GPU's 1/8 shard,
  // 2 x (3/4) x Psi/8 per GPU, against the flat run's three collectives of (3/4) x Psi/8 per NIC:
  // two thirds of the bytes where the network sets the pace.
  CHECK(h.iteration_time_s < 0.8 * f.iteration_time_s);
  CHECK(h.iteration_time_s > 0.6 * f.iteration_time_s);
  CHECK(h.memory.peak().total() > f.memory.peak().total());  // the price: states over 8, not 32
  // Plans that cannot run are refused with the reason.
  cfg.shard_group = 5;
  CHECK_THROWS_WITH(TrainingPlan(model, cfg, 32, 8), doctest::Contains("does not divide the 32 ranks"));
  cfg.shard_group = 8;
  cfg.zero = 0;
  CHECK_THROWS_WITH(TrainingPlan(model, cfg, 32, 8), doctest::Contains("needs sharded states"));
}

namespace {

struct GatherRun {
  double iteration = 0;
  double gathers = 0;      // summed duration of the weight all-gathers
  double layer_fwd = 0;    // one layer's forward on the first micro-batch
  int layers = 0;
};

// ZeRO-1 on one DGX-like node whose NVLink rate is scaled so that a layer's weight all-gather
// takes `ratio` times the layer's forward; `overlap`: Megatron-Core's --overlap-param-gather.
GatherRun zero1_run(bool overlap, double link_bandwidth) {
  ModelSpec model = testing::gpt(8, 4096, 32, 8);  // tiny vocabulary, rotary positions: layers dominate
  model.position = PositionKind::kRope;
  TrainingConfig cfg = testing::config(1, 1, 8, 8 * 4);
  cfg.zero = 1;
  cfg.overlap_param_gather = overlap;
  topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  cluster.intra.bandwidth = link_bandwidth;
  const TrainingPlan plan(model, cfg, 8, 8);
  models::CollectiveParams coll;
  coll.collective_sms = 0;  // gathers beside kernels do not slow them here: the closed form has no such term
  const auto r = simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), coll, {}});
  GatherRun out;
  out.iteration = r.iteration_time_s;
  out.layers = model.layers;
  const auto& g = r.graph->graph;
  for (sim::TaskId id = 0; id < g.task_count(); ++id) {
    const std::string label(g.label_of(id));
    const double d = (*r.timeline)[id].end - (*r.timeline)[id].start;
    if (label.find("weights all-gather") != std::string::npos) out.gathers += d;
    if (g.task(id).category == kForwardTask && label.find("L3") != std::string::npos && out.layer_fwd == 0) out.layer_fwd = d;
  }
  return out;
}

}  // namespace

// Megatron-Core's distributed optimizer with --overlap-param-gather: the updated weights' all-gather
// runs layer by layer during the next forward instead of after the optimizer step. Layer i of L
// waits for i gathers of g each, so the first micro-batch's forward ends max(g, L (g - f) + f)
// after L f, instead of the whole L g after the step.
TEST_CASE("ZeRO-1 weight all-gather overlapped with the next forward: exposed per the closed form") {
  const GatherRun probe = zero1_run(false, 100e9);
  REQUIRE(probe.gathers > 0);
  REQUIRE(probe.layer_fwd > 0);
  const double L = probe.layers;
  for (double ratio : {0.5, 2.0}) {
    // The gathers' time scales as 1 / bandwidth (their latency is negligible at these sizes).
    const double bw = 100e9 * probe.gathers / (ratio * probe.layer_fwd * L);
    const GatherRun sync = zero1_run(false, bw), over = zero1_run(true, bw);
    const double g = sync.gathers / L, f = probe.layer_fwd;
    CAPTURE(ratio);
    CHECK(g == exasim::testing::approx(ratio * f).epsilon(0.05));
    CHECK(over.gathers == exasim::testing::approx(sync.gathers).epsilon(0.01));  // the same bytes, moved elsewhere
    const double delay = std::max(g, L * (g - f) + f);
    CHECK(sync.iteration - over.iteration == exasim::testing::approx(L * g - delay).epsilon(0.05));
  }
}

TEST_CASE("overlap_param_gather is read, and refused where there is no ZeRO-1/2 gather to overlap") {
  const auto training = [](const std::string& extra) {
    return read_training(config::load_string("{seq_len: 4096, global_batch: 8, " + extra + "}", "zero.yaml"), 8);
  };
  CHECK(training("zero: 1, overlap_param_gather: true").overlap_param_gather);
  CHECK_FALSE(training("zero: 1").overlap_param_gather);
  CHECK_THROWS_WITH_AS(training("overlap_param_gather: true"), doctest::Contains("needs ZeRO-1 or 2 (zero: 0)"), ConfigError);
  CHECK_THROWS_WITH_AS(training("zero: 3, overlap_param_gather: true"), doctest::Contains("needs ZeRO-1 or 2 (zero: 3)"), ConfigError);
}
