// The Nemotron catalog entries (configs/models/nemotron.yaml) against an independent figure: the
// NeMo 24.07 performance table prints tokens/s and model TFLOP/s per GPU for each, whose ratio is
// the model's FLOPs per token (shared/validation/published_cases.yaml ids nemo2407-pretrain-Nemotron-*).
#include <doctest/doctest.h>

#include "approx.hpp"

#include <string>

#include "training_fixture.hpp"
#include "workloads/model/model_config.hpp"
#include "workloads/training/model_flops.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_plan.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

ModelSpec nemotron(const std::string& name) {
  return resolve_model(config::load_string(name, "<test>"), testing::catalog(), ".");
}

// Model FLOPs per token of a training step (forward and both gradients), 4096-token sequences.
double flops_per_token(const ModelSpec& m) {
  TrainingConfig c;
  c.seq_len = 4096;
  c.micro_batch = 1;
  return model_forward_flops(m, c) * step_flops_per_forward(c) / 4096;
}

}  // namespace

TEST_CASE("Nemotron catalog: FLOPs per token match the NeMo 24.07 table's TFLOP/s over tokens/s") {
  CHECK(flops_per_token(nemotron("nemotron-8b")) == exasim::testing::approx(643e12 / 12507).epsilon(0.002));
  CHECK(flops_per_token(nemotron("nemotron-22b")) == exasim::testing::approx(562e12 / 4312).epsilon(0.002));
  CHECK(flops_per_token(nemotron("nemotron-4-340b")) == exasim::testing::approx(686e12 / 326).epsilon(0.002));
  // Reports: Nemotron-4 15B has 15 B parameters, 3.2 B of them embeddings; 340B has 340 B.
  const ModelSpec m15 = nemotron("nemotron-4-15b");
  CHECK(m15.parameter_count() == exasim::testing::approx(15.6e9).epsilon(0.01));
  CHECK(nemotron("nemotron-4-340b").parameter_count() == exasim::testing::approx(341e9).epsilon(0.005));
}

TEST_CASE("Nemotron-4 340B in fp8 fits NeMo 24.07's TP8 PP8 VP12 plan on 80 GB H100s, in bf16 it does not") {
  // The NeMo 24.07 run: 128 H100 80GB, TP8 PP8 VP12 DP2, micro-batch 1, batch 32, distributed
  // optimizer, no recompute. fp8 GEMMs keep their inputs at one byte, which is what lets it fit.
  TrainingConfig c;
  c.seq_len = 4096;
  c.micro_batch = 1;
  c.global_batch = 32;
  c.zero = 1;
  c.pipeline_schedule = "interleaved";
  c.attention = AttentionKernel::kFlash;
  c.parallelism.tp = 8;
  c.parallelism.pp = 8;
  c.parallelism.vpp = 12;
  c.parallelism.dp = 2;
  c.parallelism.sequence_parallel = true;
  c.precision = DType::kFp8;
  const ModelSpec m = nemotron("nemotron-4-340b");
  const double gib = 1024.0 * 1024 * 1024;
  const double fp8_peak = training_memory(TrainingPlan(m, c, 128, 8)).peak().total();
  c.precision = DType::kBf16;
  const double bf16_peak = training_memory(TrainingPlan(m, c, 128, 8)).peak().total();
  CHECK(fp8_peak < 80 * gib);
  CHECK(bf16_peak > 80 * gib);
}
