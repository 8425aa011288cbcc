// Ablations the seed papers report, on the default GPT-3 175B scenario (DGX A100, HDR fat-tree)
// with one knob changed at a time: the simulated effect must have the published direction and a
// size that agrees with the paper or with the schedule's closed form.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

const std::string kScenario = std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/gpt3-175b-a100-1024.yaml";

TrainingResult run(std::vector<std::string> overrides) {
  static const hw::Catalog catalog = hw::Catalog::load(std::string(EXASIM_SOURCE_DIR) + "/configs");
  const Scenario s = load_scenario(kScenario, overrides, catalog);
  const TrainingPlan plan(s.model, *s.training, s.cluster.gpu_count(), s.cluster.gpus_per_node);
  return simulate_training({plan, s.cluster, s.calibration.kernel, s.calibration.collective, s.cost, {}, {}, s.calibration.host});
}

// GPT-3 175B on 96 GPUs (TP8 PP12 DP1), the setting of Megatron SC'21 Figure 12.
std::vector<std::string> fig12(int batch, const std::string& schedule, int vpp) {
  return {"cluster.nodes=12", "training.global_batch=" + std::to_string(batch), "training.parallelism.pp=12",
          "training.parallelism.dp=1", "training.parallelism.vpp=" + std::to_string(vpp),
          "training.pipeline_schedule=" + schedule};
}

}  // namespace

TEST_CASE("ablation: interleaving speeds up small batches by 10%+ and the gain shrinks with batch (SC'21 Fig. 12)") {
  const int p = 12, v = 2;
  double previous = 1e9;
  for (int m : {12, 24, 48}) {
    const double plain = run(fig12(m, "1f1b", 1)).iteration_time_s;
    const double interleaved = run(fig12(m, "interleaved", v)).iteration_time_s;
    const double speedup = plain / interleaved;
    // Closed form with free communication: (m + p - 1) / (m + (p - 1) / v) (SC'21 Sec. 2.2.2).
    const double bound = (m + p - 1.0) / (m + (p - 1.0) / v);
    CAPTURE(m);
    CHECK(speedup > 1.0);
    CHECK(speedup <= bound * 1.01);
    CHECK(speedup < previous);
    if (m == 12) CHECK(speedup >= 1.10);
    previous = speedup;
  }
}

TEST_CASE("ablation: ZB-H1 beats 1F1B when micro-batches are few, by less than its closed-form gain") {
  for (int m : {12, 48}) {
    const double plain = run(fig12(m, "1f1b", 1)).iteration_time_s;
    const double zb = run(fig12(m, "zero-bubble", 1)).iteration_time_s;
    CAPTURE(m);
    MESSAGE("ZB-H1 vs 1F1B at m ", m, ": ", plain / zb);
    CHECK(plain / zb > 1.0);
    // ZB-H1 cuts the bubble from (p-1)(F+B) to (p-1)(F+B-W): never more than (m+p-1)/m faster.
    CHECK(plain / zb < (m + 11.0) / m);
    if (m == 12) CHECK(plain / zb >= 1.05);  // Qi et al. 2023 report gains of this order at m ~ p
  }
}

TEST_CASE("ablation: ZB-H2 beats ZB-H1 and 1F1B, by up to its closed-form gain (Qi et al., ICLR'24)") {
  // With 2p - 1 micro-batches in flight and no synchronisation between iterations, ZB-H2 idles
  // (p - 1)(F + B - 2W) per rank against 1F1B's (p - 1)(F + B + W): at most (m + p - 1) / m faster.
  // Qi et al. report up to 23% over 1F1B at 1F1B's memory (ZB-1p) and up to 31% with the memory
  // relaxed to 2p (ZB-2p, the automatic schedule of ZB-H2's budget). Here: 1.20 and 1.34 at m 24.
  for (int m : {24, 48}) {
    const double plain = run(fig12(m, "1f1b", 1)).iteration_time_s;
    const double h1 = run(fig12(m, "zero-bubble", 1)).iteration_time_s;
    const double h2 = run(fig12(m, "zero-bubble-h2", 1)).iteration_time_s;
    CAPTURE(m);
    MESSAGE("1F1B / ZB-H1 ", plain / h1, ", 1F1B / ZB-H2 ", plain / h2, " at m ", m);
    CHECK(h2 < h1);
    CHECK(h1 < plain);
    CHECK(plain / h2 < (m + 11.0) / m);
    if (m == 24) CHECK(plain / h2 >= 1.15);
  }
}

TEST_CASE("ablation: selective recompute is ~29% faster than full on 530B over 2240 GPUs (Korthikanti et al. 2022)") {
  // The abstract: MFU 54.2% with selective recompute + sequence parallelism vs 42.1% with full recompute.
  const std::vector<std::string> base = {
      "cluster.nodes=280",  "model.layers=105",          "model.hidden=20480",         "model.heads=128",
      "model.kv_heads=128", "model.ffn=81920",           "training.global_batch=1920", "training.parallelism.pp=35",
      "training.parallelism.dp=8"};
  auto with = [&](const std::string& recompute) {
    auto o = base;
    o.push_back("training.recompute=" + recompute);
    return run(o).iteration_time_s;
  };
  const double ratio = with("full") / with("selective");
  CHECK(ratio == exasim::testing::approx(54.2 / 42.1).epsilon(0.10));
}

TEST_CASE("ablation: PTD-P stays ahead of ZeRO-3 at 175B, whose throughput per GPU falls with scale (SC'21 Table 2)") {
  // Published: ZeRO-3 144 -> 88 -> 44 TFLOP/s per GPU on 384 -> 768 -> 1536 GPUs at batch 1536
  // (micro-batch 4, 2, 1); PTD-P 153 -> 149 -> 141. ZeRO-3 runs with DeepSpeed's 2021 collective
  // rate (configs/calibration/deepspeed-zero3-2021-selene.yaml, fitted on the 1536-GPU run only).
  const std::string deepspeed = "calibration=" + std::string(EXASIM_SOURCE_DIR) + "/configs/calibration/deepspeed-zero3-2021-selene.yaml";
  auto zero3 = [&](int nodes, bool framework) {
    const int gpus = nodes * 8;
    std::vector<std::string> o = {"cluster.nodes=" + std::to_string(nodes), "training.parallelism.tp=1",
                                  "training.parallelism.pp=1", "training.parallelism.dp=" + std::to_string(gpus),
                                  "training.zero=3", "training.global_batch=1536",
                                  "training.micro_batch=" + std::to_string(1536 / gpus), "training.recompute=full",
                                  "training.parallelism.sequence_parallel=false"};
    if (framework) o.push_back(deepspeed);
    return run(o).tflops_per_gpu;
  };
  auto ptdp = [](int nodes) {
    return run({"cluster.nodes=" + std::to_string(nodes), "training.parallelism.pp=12",
                "training.parallelism.dp=" + std::to_string(nodes * 8 / 96), "training.global_batch=1536",
                "training.recompute=full", "training.parallelism.sequence_parallel=false"})
        .tflops_per_gpu;
  };
  const double z384 = zero3(48, true), z768 = zero3(96, true), z1536 = zero3(192, true);
  const double p384 = ptdp(48), p1536 = ptdp(192);
  // Held-out runs (384, 768 GPUs) within 20% of the paper; the fall with scale and PTD-P's lead.
  // The paper counts the recomputed forward (4/3 of the model FLOPs that tflops_per_gpu counts).
  CHECK(z384 == exasim::testing::approx(144 * 0.75).epsilon(0.20));
  CHECK(z768 == exasim::testing::approx(88 * 0.75).epsilon(0.20));
  CHECK(z768 / z384 == exasim::testing::approx(88.0 / 144).epsilon(0.25));
  CHECK(z1536 / z768 == exasim::testing::approx(44.0 / 88).epsilon(0.25));
  CHECK(p384 > z384);
  CHECK(p1536 > 2 * z1536);  // published 141 vs 44
  // An implementation at the network model's full rate (NCCL over all rails, gathers prefetched
  // behind the layers) would not fall with scale: the 2021 gap is the framework's, not the machine's.
  CHECK(zero3(192, false) > 2 * z1536);
}

TEST_CASE("FLOP accounting: HFU equals MFU without recompute and full recompute adds about one forward pass") {
  const TrainingResult none = run({"training.recompute=none", "training.parallelism.pp=16", "cluster.nodes=128"});
  const TrainingResult full = run({"training.recompute=full"});
  CHECK(none.hfu == exasim::testing::approx(none.mfu));
  // Full recompute runs the layers' forward twice: (2F + B) / (F + B) = 4/3 with B = 2F, a bit less
  // because the embedding and LM head are not recomputed.
  CHECK(full.hfu / full.mfu == exasim::testing::approx(4.0 / 3.0).epsilon(0.03));
  CHECK(full.hfu / full.mfu < 4.0 / 3.0);
}
