// Block recompute (Megatron-LM --recompute-method block --recompute-num-layers N): the first N
// layers of each model chunk are recomputed in full, the others keep their activations. Checked
// against Korthikanti et al.'s per-layer bytes (34 s b h + 5 a s^2 b without recompute under
// unfused attention, 2 s b h with it) and against the recomputed FLOPs of full recompute.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "hw/config/node.hpp"
#include "hw/error.hpp"
#include "training_fixture.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

TrainingResult simulate(models::Recompute policy, int layers_recomputed, int pp = 1, int vpp = 1) {
  const ModelSpec m = testing::gpt(8, 2048, 16);
  TrainingConfig c = testing::config(1, pp, 1, 8);
  c.recompute = policy;
  c.recompute_layers = layers_recomputed;
  c.attention = AttentionKernel::kUnfused;
  if (vpp > 1) c.pipeline_schedule = "interleaved", c.parallelism.vpp = vpp;
  const topologies::Cluster cluster = testing::ideal_cluster(1, pp);
  const TrainingPlan plan(m, c, pp, pp);
  return simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}});
}

// Recomputed FLOPs per iteration, from the two utilisation figures: hfu / mfu = (M + R) / M.
double recomputed_share(const TrainingResult& r) { return r.hfu / r.mfu - 1; }

}  // namespace

TEST_CASE("block recompute: N of L layers keep only their inputs, the others everything (Korthikanti)") {
  const ModelSpec m = testing::gpt(8, 2048, 16);
  TrainingConfig c = testing::config(1, 2, 1, 8);
  c.attention = AttentionKernel::kUnfused;
  c.recompute = models::Recompute::kFull;
  c.recompute_layers = 3;
  const TrainingPlan plan(m, c, 2, 8);
  const MemoryReport r = training_memory(plan);
  // Per layer and micro-batch (bytes): 34 s b h + 5 a s^2 b kept, 2 s b h recomputed.
  const double s = 2048, h = 2048, a = 16;
  const double kept = 34 * s * h + 5 * a * s * s, recomputed = 2 * s * h;
  // 4 layers a stage, 3 recomputed; 1F1B keeps pp - stage micro-batches in flight.
  CHECK(r.stages[0].activations == exasim::testing::approx(2 * (3 * recomputed + 1 * kept)).epsilon(1e-9));
  // More recompute_layers than the chunk has: the whole chunk, as full recompute.
  c.recompute_layers = 4;
  const MemoryReport all = training_memory(TrainingPlan(m, c, 2, 8));
  c.recompute_layers = 0;
  const MemoryReport full = training_memory(TrainingPlan(m, c, 2, 8));
  CHECK(all.stages[0].activations == exasim::testing::approx(full.stages[0].activations));
  CHECK(full.stages[0].activations == exasim::testing::approx(2 * 4 * recomputed).epsilon(1e-9));
  // The last stage (one micro-batch in flight, and the head's buffers in both): one layer's difference.
  CHECK(r.stages[1].activations - full.stages[1].activations == exasim::testing::approx(kept - recomputed).epsilon(1e-9));
}

TEST_CASE("block recompute: the recomputed forward FLOPs are N / L of full recompute's, per model chunk") {
  const TrainingResult none = simulate(models::Recompute::kNone, 0);
  const TrainingResult full = simulate(models::Recompute::kFull, 0);
  REQUIRE(recomputed_share(full) > 0.2);
  CHECK(recomputed_share(none) == exasim::testing::approx(0));
  for (int n : {1, 2, 5}) {
    CAPTURE(n);
    const TrainingResult part = simulate(models::Recompute::kFull, n);
    CHECK(recomputed_share(part) == exasim::testing::approx(recomputed_share(full) * n / 8).epsilon(1e-6));
    CHECK(part.iteration_time_s > none.iteration_time_s);
    CHECK(part.iteration_time_s < full.iteration_time_s);
  }
  // Interleaved, 2 stages x 2 chunks of 2 layers: N = 1 recomputes one layer of each chunk, half.
  const TrainingResult chunked = simulate(models::Recompute::kFull, 1, 2, 2);
  const TrainingResult chunked_full = simulate(models::Recompute::kFull, 0, 2, 2);
  CHECK(recomputed_share(chunked) == exasim::testing::approx(recomputed_share(chunked_full) / 2).epsilon(1e-6));
}

TEST_CASE("block recompute: recompute_layers without full recompute is refused by name") {
  const std::string yaml =
      "cluster: {gpus_per_node: 8}\n"
      "model: none\n"
      "training:\n"
      "  seq_len: 2048\n"
      "  global_batch: 8\n"
      "  recompute: selective\n"
      "  recompute_layers: 2\n"
      "  parallelism: {dp: 8}\n";
  try {
    (void)read_training(config::load_string(yaml, "s.yaml")["training"], 8);
    FAIL("accepted");
  } catch (const ConfigError& e) {
    CHECK(e.where().file == "s.yaml");
    CHECK(e.where().line == 7);
    CHECK(e.where().key == "training.recompute_layers");
    CHECK(std::string(e.hint()).find("recompute: full") != std::string::npos);
  }
}
