// Optimizer offload (ZeRO-Offload, Ren et al., ATC'21): Adam's fp32 states leave the GPU for host
// memory, the gradients cross PCIe to the host, the CPUs step, the 16-bit weights come back.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <limits>
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "models/cpu/cpu_gemm_model.hpp"
#include "models/cpu/cpu_memory_model.hpp"
#include "graph_traffic.hpp"
#include "training_fixture.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/offload_costs.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

const std::string kScenario = std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/gpt3-175b-a100-1024.yaml";

// GPT-3 175B, TP8 PP16 DP8 on DGX A100 (2x EPYC 7742, 2 TiB, PCIe Gen4), gradients reduced after
// the backward pass so that nothing hides the offload chain.
struct Run {
  Scenario s;
  TrainingResult r;
};
Run run(const std::vector<std::string>& overrides) {
  static const hw::Catalog catalog = hw::Catalog::load(std::string(EXASIM_SOURCE_DIR) + "/configs");
  std::vector<std::string> all = {"training.overlap_grad_reduce=false", "training.zero=1"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  Scenario s = load_scenario(kScenario, all, catalog);
  const TrainingPlan plan(s.model, *s.training, s.cluster.gpu_count(), s.cluster.gpus_per_node);
  TrainingResult r = simulate_training({plan, s.cluster, s.calibration.kernel, s.calibration.collective, s.cost});
  return {std::move(s), std::move(r)};
}

}  // namespace

TEST_CASE("offload: the optimizer states leave the GPU, the weights stay") {
  const Run plain = run({}), off = run({"training.offload=optimizer-cpu"});
  const StageMemory& a = plain.r.memory.peak();
  const StageMemory& b = off.r.memory.peak();
  CHECK(a.optimizer > 0);
  CHECK(b.optimizer == 0);
  CHECK(b.weights == exasim::testing::approx(a.weights));
  CHECK(b.gradients < a.gradients);
}

TEST_CASE("offload: the host chain is PCIe out, memory-bound Adam on the node's sockets, PCIe back") {
  const Run off = run({"training.offload=optimizer-cpu"});
  const topologies::HostSide& host = *off.s.cluster.host;
  CHECK(host.cpu.name == "amd-epyc-7742");
  CHECK(host.cpus_per_node == 2);
  // Parameters this GPU owns: its stage's share, sharded over the 8 data-parallel replicas.
  double owned = off.r.memory.stages[1].parameters / 8;
  double to_host = 0, step = 0, back = 0;
  const auto& stage = off.r.graph->stages[1];
  for (sim::TaskId id : off.r.graph->graph.stream_tasks(stage.offload)) {
    const auto& t = off.r.graph->graph.task(id);
    const std::string label(off.r.graph->graph.label(t.label));
    if (label == "gradients to host") to_host += t.duration;
    if (label == "host optimizer step") step = t.duration;
    if (label == "weights to GPU") back = t.duration;
  }
  const double pcie = 0.8 * 31.5e9;  // Gen4 x16 per direction, pinned-copy efficiency
  CHECK(to_host == exasim::testing::approx(2 * owned / pcie).epsilon(0.01));
  CHECK(back == exasim::testing::approx(2 * owned / pcie));
  // 30 B per parameter for the 8 GPUs' shards over the two sockets' DRAM, as the CPU memory model times it.
  const models::CpuParams cpu = models::CpuParams::defaults_for(host.cpu);
  const double per_socket = owned * 8 / 2;
  const models::LevelBandwidth dram = models::level_bandwidth(cpu, models::CpuLevel::kDram, host.cpu.cores);
  CHECK(step >= 16 * per_socket / dram.read);
  CHECK(step == exasim::testing::approx(16 * per_socket / dram.read + 14 * per_socket / dram.write).epsilon(0.02));
}

TEST_CASE("offload: the iteration grows by the exposed host chain, less the GPU optimizer step it replaces") {
  const Run plain = run({}), off = run({"training.offload=optimizer-cpu"});
  const double added = off.r.iteration_time_s - plain.r.iteration_time_s;
  CHECK(added > 0);
  CHECK(off.r.breakdown.offload > 0);
  // The GPU keeps the gradient norm (optimizer 1.7 of 5.0 ms here); the stages' host chains end at
  // different times, which moves the pipeline's drain (the breakdown's bubble, +9.7 ms of 2.2 s).
  const double expected = off.r.breakdown.offload + off.r.breakdown.optimizer - plain.r.breakdown.optimizer;
  CHECK(added == exasim::testing::approx(expected).epsilon(0.06));
  CHECK(added >= expected);
}

TEST_CASE("offload: plans it cannot run say why") {
  CHECK_THROWS_WITH_AS(run({"training.offload=params-cpu", "training.zero=1"}), doctest::Contains("needs zero: 3"), PlanError);
  CHECK_THROWS_WITH_AS(run({"training.offload=nvme"}), doctest::Contains("needs zero: 3"), PlanError);
  // A cluster without a catalog server has no host side to offload to.
  const ModelSpec model = testing::gpt(4, 1024, 16, 1000);
  TrainingConfig cfg = testing::config(1, 1, 8, 8);
  cfg.offload = "optimizer-cpu";
  const topologies::Cluster cluster = testing::ideal_cluster(1, 8);
  const TrainingPlan plan(model, cfg, 8, 8);
  CHECK_THROWS_WITH_AS(simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}}),
                       doctest::Contains("host"), PlanError);
}

// ZeRO-Infinity (Rajbhandari et al., SC'21) with CPU memory: ZeRO-3 whose 16-bit parameter shards
// and optimizer states live on the host. Every gather first copies the GPU's shard of the layer
// over PCIe (forward and backward, each micro-batch); every gradient reduce-scatter sends the
// GPU's shard back; the host steps; nothing returns after the step.
TEST_CASE("offload: ZeRO-Infinity moves each layer's shard over PCIe before its gathers, the GPU keeps two layers") {
  const Run z3 = run({"training.zero=3"});
  const Run inf = run({"training.zero=3", "training.offload=params-cpu"});
  const Run opt3 = run({"training.zero=3", "training.offload=optimizer-cpu"});
  const ModelSpec& m = inf.s.model;
  const double layer = m.layer_parameter_count() / 8;  // tp 8
  const StageMemory& mem = inf.r.memory.stages[1];
  CHECK(mem.weights == exasim::testing::approx(2 * 2 * layer));
  CHECK(mem.optimizer == 0);
  CHECK(mem.gradients == exasim::testing::approx(2 * layer));
  CHECK(z3.r.memory.stages[1].optimizer > 0);
  // PCIe traffic of stage 1 (6 layers, 192 micro-batches of the GPT-3 scenario, shards over dp 8).
  const int layers = 96 / 16, micro_batches = 1536 / 8;
  const auto& st = inf.r.graph->stages[1];
  double fetched = 0, to_host = 0, back = 0;
  for (sim::TaskId id : inf.r.graph->graph.stream_tasks(st.param_fetch)) fetched += inf.r.graph->graph.task(id).bytes;
  for (sim::TaskId id : inf.r.graph->graph.stream_tasks(st.offload)) {
    const auto label = inf.r.graph->graph.label_of(id);
    if (label == "gradients to host") to_host += inf.r.graph->graph.task(id).bytes;
    if (label == "weights to GPU") back += inf.r.graph->graph.task(id).bytes;
  }
  CHECK(fetched == exasim::testing::approx(2.0 * micro_batches * layers * 2 * layer / 8));
  CHECK(to_host == exasim::testing::approx(1.0 * micro_batches * layers * 2 * layer / 8));
  CHECK(back == 0);
  // Slower than ZeRO-3 on the GPU: the PCIe copies and the host step are not all hidden.
  CHECK(inf.r.iteration_time_s > z3.r.iteration_time_s);
  CHECK(inf.r.breakdown.offload > 0);
  // Optimizer-only offload under ZeRO-3: the shard's weights come back after the host step.
  double back3 = 0;
  for (sim::TaskId id : opt3.r.graph->graph.stream_tasks(opt3.r.graph->stages[1].offload))
    if (opt3.r.graph->graph.label_of(id) == "weights to GPU") back3 += opt3.r.graph->graph.task(id).bytes;
  CHECK(back3 == exasim::testing::approx(2 * opt3.r.memory.stages[1].parameters / 8));
  CHECK(opt3.r.memory.stages[1].optimizer == 0);
}

// ZeRO-Infinity on NVMe: the node's drives (DGX A100: 4 x 7.0 GB/s read, 4 x 3.8 GB/s write,
// estimates in nodes.yaml) are shared by its 8 GPUs, so each fetches its shards at 28 / 8 GB/s
// (less than PCIe); the host step streams 14 B per parameter of the node's owned states in and out.
TEST_CASE("offload: ZeRO-Infinity on NVMe fetches at the GPU's share of the drives and steps at the drives' pace") {
  const Run cpu = run({"training.zero=3", "training.offload=params-cpu"});
  const Run nvme = run({"training.zero=3", "training.offload=nvme"});
  const topologies::HostSide& host = *nvme.s.cluster.host;
  CHECK(host.nvme_read == exasim::testing::approx(28e9));
  CHECK(host.nvme_write == exasim::testing::approx(15.2e9));
  const auto& g = nvme.r.graph->graph;
  const auto& st = nvme.r.graph->stages[1];
  for (sim::TaskId id : g.stream_tasks(st.param_fetch)) CHECK(g.task(id).duration == exasim::testing::approx(g.task(id).bytes / 3.5e9));
  const double owned = nvme.r.memory.stages[1].parameters / 8;
  double step = 0;
  for (sim::TaskId id : g.stream_tasks(st.offload))
    if (g.label_of(id) == "host optimizer step") step = g.task(id).duration;
  CHECK(step == exasim::testing::approx(14 * owned * 8 / 15.2e9));
  CHECK(nvme.r.iteration_time_s > cpu.r.iteration_time_s);
  CHECK(nvme.r.memory.stages[1].weights == exasim::testing::approx(cpu.r.memory.stages[1].weights));
  // A server without NVMe figures cannot take it.
  topologies::Cluster bare = nvme.s.cluster;
  bare.host->nvme_read = bare.host->nvme_write = 0;
  const TrainingPlan plan(nvme.s.model, *nvme.s.training, bare.gpu_count(), bare.gpus_per_node);
  CHECK_THROWS_WITH_AS(simulate_training({plan, bare, nvme.s.calibration.kernel, nvme.s.calibration.collective, nvme.s.cost}),
                       doctest::Contains("NVMe bandwidth"), PlanError);
}

// ZeRO-Offload with expert parallelism (DeepSpeed-MoE runs its optimizer offload so): each GPU owns
// its shard of the dense weights (over the 8 data-parallel GPUs) and of its experts (over their 2
// replicas); what crosses PCIe and what the host steps is that share. Mixtral 8x7B by hand (the
// figures of moe_zero3_test.cpp): on one DGX A100 with ep 4 the states of ZeRO-1 do not fit, offloaded they do.
TEST_CASE("offload with mixture-of-experts: the host steps each GPU's dense and expert shards") {
  constexpr double kH = 4096, kF = 14336, kLayers = 32, kVocab = 32000;
  constexpr double kDenseLayer = kH * (kH + 2 * 8 * 128) + kH * kH + 2 * kH + kH * 8;  // attention, norms, router
  constexpr double kExpert = 3 * kH * kF;
  const std::vector<std::string> mixtral = {"cluster.nodes=1", "model=mixtral-8x7b", "training.seq_len=4096",
                                            "training.global_batch=16", "training.recompute=full",
                                            "training.parallelism.tp=1", "training.parallelism.pp=1",
                                            "training.parallelism.dp=8", "training.parallelism.ep=4",
                                            "training.parallelism.sequence_parallel=false"};
  CHECK_THROWS_WITH_AS(run(mixtral), doctest::Contains("does not fit"), PlanError);
  std::vector<std::string> offloaded = mixtral;
  offloaded.push_back("training.offload=optimizer-cpu");
  const Run off = run(offloaded);
  const double dense = kLayers * kDenseLayer + 2 * kVocab * kH + kH;  // + embedding, head, final norm
  const double experts = kLayers * 2 * kExpert;                        // 8 experts over ep 4: 2 a GPU
  const double owned = dense / 8 + experts / 2;
  auto totals = testing::totals_by_label(*off.r.graph);
  auto traffic = testing::traffic_by_label(*off.r.graph);
  CHECK(totals["gradients to host"].bytes == exasim::testing::approx(2 * owned));
  CHECK(totals["host optimizer step"].flops == exasim::testing::approx(12 * owned));
  CHECK(traffic["expert weights all-gather"].count == 1);  // the updated expert shards come back to both replicas
  CHECK(traffic["expert weights all-gather"].bytes == exasim::testing::approx(2 * experts));
  const StageMemory& m = off.r.memory.peak();
  CHECK(m.optimizer == 0);
  CHECK(m.gradients == exasim::testing::approx(2 * (kDenseLayer + 2 * kExpert)));  // one layer's bucket on its way out
  CHECK(m.weights == exasim::testing::approx(2 * (dense + experts)));
  // ZeRO-Infinity: the parameters on the host too. Each gather first fetches this GPU's shards of
  // the layer (dense over 8, its 2 experts over their 2 replicas); the GPU keeps two layers' weights.
  std::vector<std::string> infinity = mixtral;
  infinity.insert(infinity.end(), {"training.offload=params-cpu", "training.zero=3"});
  const Run inf = run(infinity);
  auto inf_traffic = testing::traffic_by_label(*inf.r.graph);
  auto inf_totals = testing::totals_by_label(*inf.r.graph);
  const double fetch = 2 * (kDenseLayer / 8 + 2 * kExpert / 2);  // bytes per layer and gather
  const int gathers = inf_traffic["fsdp gather (fwd)"].count + inf_traffic["fsdp gather (bwd)"].count;
  CHECK(gathers >= 2 * 32 * 2);  // every layer, forward and backward (and recompute), each micro-batch
  CHECK(inf_totals["params to GPU"].bytes == exasim::testing::approx(gathers * fetch));
  CHECK(inf_totals["host optimizer step"].flops == exasim::testing::approx(12 * owned));
  const StageMemory& mi = inf.r.memory.peak();
  CHECK(mi.optimizer == 0);
  CHECK(mi.weights == exasim::testing::approx(2 * 2 * (kDenseLayer + 2 * kExpert)));
  CHECK(mi.gathered == 0);  // weights and gradients are counted where they live
}

// ZeRO-Offload with LoRA: the optimizer owns the adapters only, so that is what crosses PCIe and
// what the host steps: Llama-2-7B with rank-8 QKV adapters, r (h + 3h) per layer (no GQA) x 32
// layers, sharded over 8 data-parallel GPUs (ZeRO-1).
TEST_CASE("offload with LoRA: the host steps the GPU's shard of the adapters") {
  const Run off = run({"cluster.nodes=1", "model=llama2-7b", "training.lora={rank: 8, targets: [qkv]}",
                       "training.parallelism.tp=1", "training.parallelism.pp=1", "training.parallelism.dp=8",
                       "training.parallelism.sequence_parallel=false", "training.global_batch=64",
                       "training.offload=optimizer-cpu"});
  const double h = 4096, adapters = 32 * 8 * (h + 3 * h), owned = adapters / 8;
  auto totals = testing::totals_by_label(*off.r.graph);
  CHECK(totals["gradients to host"].bytes == exasim::testing::approx(2 * owned));
  CHECK(totals["host optimizer step"].flops == exasim::testing::approx(12 * owned));
  CHECK(totals["weights to GPU"].bytes == exasim::testing::approx(2 * owned));
  const StageMemory& m = off.r.memory.peak();
  CHECK(m.optimizer == 0);
  CHECK(m.gradients == exasim::testing::approx(2 * 8 * (h + 3 * h)));  // one layer's adapter gradients
  CHECK(m.weights == exasim::testing::approx(2 * m.parameters + 2 * adapters));
}

// ZeRO-Infinity with LoRA: the frozen weights and the adapters both live on the host, sharded; each
// gather first fetches the GPU's shard of both; only the adapters' states are stepped there, and
// the host also holds the frozen 16-bit shards (2 B each).
TEST_CASE("offload with LoRA and ZeRO-Infinity: frozen weights and adapters fetched, adapters stepped") {
  const Run inf = run({"cluster.nodes=1", "model=llama2-7b", "training.lora={rank: 8, targets: [qkv]}",
                       "training.parallelism.tp=1", "training.parallelism.pp=1", "training.parallelism.dp=8",
                       "training.parallelism.sequence_parallel=false", "training.global_batch=64",
                       "training.zero=3", "training.offload=params-cpu"});
  const double h = 4096, a = 8 * (h + 3 * h);  // one layer's adapters
  const double layer = inf.s.model.layer_parameter_count();
  auto traffic = testing::traffic_by_label(*inf.r.graph);
  auto totals = testing::totals_by_label(*inf.r.graph);
  const int gathers = traffic["fsdp gather (fwd)"].count + traffic["fsdp gather (bwd)"].count;
  REQUIRE(gathers > 0);
  CHECK(traffic["fsdp gather (fwd)"].bytes == exasim::testing::approx(2 * (layer + a)));
  CHECK(totals["params to GPU"].bytes == exasim::testing::approx(gathers * 2 * (layer + a) / 8));
  CHECK(totals["host optimizer step"].flops == exasim::testing::approx(12 * 32 * a / 8));
  const StageMemory& m = inf.r.memory.peak();
  CHECK(m.weights == exasim::testing::approx(2 * 2 * (layer + a)));
  CHECK(m.gradients == exasim::testing::approx(2 * a));
  CHECK(m.optimizer == 0);
  CHECK(offload_host_bytes("params-cpu", 100, 1000) == exasim::testing::approx(18 * 100 + 2 * 1000));
  CHECK(offload_host_bytes("nvme", 100, 1000) == exasim::testing::approx(4 * 100));
}
