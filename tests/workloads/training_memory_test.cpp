// Memory per GPU of whole plans against the published formulas: ZeRO's model states and
// Korthikanti et al.'s activations times the micro-batches 1F1B keeps in flight (p - stage).
#include <doctest/doctest.h>

#include "approx.hpp"

#include "training_fixture.hpp"
#include "workloads/training/training_memory.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

// Megatron GPT parameter count per layer: 12 h^2 + 13 h (weights, biases, two LayerNorms).
double gpt_layer_params(double h) { return 12 * h * h + 13 * h; }

}  // namespace

TEST_CASE("GPT-3 175B, TP 8 PP 16 DP 8, selective recompute with SP, ZeRO-1") {
  ModelSpec m = testing::gpt(96, 12288, 96);
  m.tied_embeddings = true;
  m.qkv_bias = true;
  TrainingConfig c = testing::config(8, 16, 8, 1536);
  c.parallelism.sequence_parallel = true;
  c.recompute = models::Recompute::kSelective;
  c.attention = AttentionKernel::kUnfused;
  c.zero = 1;
  const TrainingPlan plan(m, c, 1024, 8);
  const MemoryReport r = training_memory(plan);
  REQUIRE(r.stages.size() == 16);

  // A middle stage: 6 layers split 8 ways; ZeRO-1 keeps 2 + 2 bytes and 12/8 optimizer bytes.
  const StageMemory& mid = r.stages[5];
  const double psi = 6 * gpt_layer_params(12288) / 8;
  CHECK(mid.parameters == exasim::testing::approx(psi).epsilon(1e-4));
  CHECK(mid.weights == exasim::testing::approx(2 * psi).epsilon(1e-4));
  CHECK(mid.gradients == exasim::testing::approx(2 * psi).epsilon(1e-4));
  CHECK(mid.optimizer == exasim::testing::approx(12 * psi / 8).epsilon(1e-4));
  // Activations: 34 s b h / t per layer (Korthikanti Table 2, SP + selective), 6 layers,
  // 16 - 5 = 11 micro-batches in flight on stage 5.
  const double sbh = 2048.0 * 1 * 12288;
  CHECK(mid.in_flight == 11);
  CHECK(mid.activations == exasim::testing::approx(34 * sbh / 8 * 6 * 11).epsilon(1e-9));
  // The first stage holds the most micro-batches (16) and the embedding: the peak.
  CHECK(r.peak_stage == 0);
  CHECK(r.stages[0].in_flight == 16);
}

TEST_CASE("ZeRO stages shard states by the data-parallel degree") {
  const ModelSpec m = testing::gpt(24, 2048, 16);
  for (int zero = 0; zero <= 3; ++zero) {
    TrainingConfig c = testing::config(1, 1, 8, 64);
    c.zero = zero;
    const TrainingPlan plan(m, c, 8, 8);
    const StageMemory s = training_memory(plan).stages[0];
    const double psi = s.parameters;
    CAPTURE(zero);
    CHECK(s.weights == exasim::testing::approx(2 * psi / (zero >= 3 ? 8 : 1)));
    CHECK(s.gradients == exasim::testing::approx(2 * psi / (zero >= 2 ? 8 : 1)));
    CHECK(s.optimizer == exasim::testing::approx(12 * psi / (zero >= 1 ? 8 : 1)));
  }
}

TEST_CASE("GPipe keeps every micro-batch, full recompute keeps only layer inputs") {
  const ModelSpec m = testing::gpt(8, 4096, 32);
  TrainingConfig c = testing::config(1, 4, 1, 12);
  c.pipeline_schedule = "gpipe";
  const TrainingPlan gpipe(m, c, 4, 8);
  CHECK(in_flight_micro_batches(gpipe, 0) == 12);
  CHECK(in_flight_micro_batches(gpipe, 3) == 12);
  c.pipeline_schedule = "1f1b";
  const TrainingPlan ofob(m, c, 4, 8);
  CHECK(in_flight_micro_batches(ofob, 0) == 4);
  CHECK(in_flight_micro_batches(ofob, 3) == 1);
  c.recompute = models::Recompute::kFull;
  const TrainingPlan full(m, c, 4, 8);
  CHECK(layer_activation_bytes(full) == exasim::testing::approx(2.0 * 2048 * 4096));
}

TEST_CASE("breadth-first holds every micro-batch of every chunk, like GPipe over the looping placement") {
  const ModelSpec m = testing::gpt(16, 4096, 32);
  TrainingConfig c = testing::config(1, 4, 1, 8);
  c.parallelism.vpp = 2;
  c.pipeline_schedule = "breadth-first";
  const TrainingPlan bf(m, c, 4, 8);
  CHECK(in_flight_chunks(bf, 0) == 8 * 2);
  CHECK(in_flight_micro_batches(bf, 3) == 8);
  c.pipeline_schedule = "interleaved";
  const TrainingPlan il(m, c, 4, 8);
  CHECK(in_flight_chunks(il, 0) < in_flight_chunks(bf, 0));
  // vpp needs a looping schedule.
  c.pipeline_schedule = "1f1b";
  CHECK_THROWS_WITH(TrainingPlan(m, c, 4, 8), doctest::Contains("interleaved or breadth-first"));
}

TEST_CASE("NCCL buffers: 64 MiB per communicator a GPU uses, fragmentation 5% of what the step allocates") {
  Parallelism p;
  p.tp = 2, p.dp = 8;
  const double mib64 = 64.0 * 1048576;
  CHECK(communication_buffer_bytes(p, 1, false) == exasim::testing::approx(2 * mib64));  // TP, DP
  CHECK(communication_buffer_bytes(p, 2, false) == exasim::testing::approx(3 * mib64));  // + the replicas' group
  p.ep = 4;
  CHECK(communication_buffer_bytes(p, 1, true) == exasim::testing::approx(4 * mib64));   // + EP, expert-DP (16 / 4)
  p.pp = 2, p.cp = 2, p.etp = 2;
  CHECK(communication_buffer_bytes(p, 1, true) == exasim::testing::approx(7 * mib64));   // + PP, CP, ETP
  Parallelism one;
  CHECK(communication_buffer_bytes(one, 1, false) == 0);
  const ModelSpec m = testing::gpt(8, 4096, 32);
  const TrainingPlan plan(m, testing::config(2, 2, 2, 8), 8, 8);
  const MemoryReport report = training_memory(plan);  // a reference into a temporary would dangle (ASan)
  const StageMemory& s = report.stages[0];
  CHECK(s.buffers == exasim::testing::approx(3 * mib64));
  CHECK(s.fragmentation == exasim::testing::approx(0.05 * (s.activations + s.buffers)));
  CHECK(s.total() == exasim::testing::approx(s.weights + s.gradients + s.optimizer + s.activations + s.buffers + s.fragmentation));
}
