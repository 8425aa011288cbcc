// Plans that cannot run are rejected with the number that makes them impossible.
#include <doctest/doctest.h>

#include <string>

#include "hw/error.hpp"
#include "training_fixture.hpp"
#include "workloads/training/training_plan.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

std::string rejection(const ModelSpec& m, const TrainingConfig& c, int gpus, int per_node = 8) {
  try {
    TrainingPlan plan(m, c, gpus, per_node);
  } catch (const PlanError& e) {
    return e.where().key + ": " + e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("divisibility and GPU count") {
  const ModelSpec m = testing::gpt(24, 2304, 24);
  CHECK(rejection(m, testing::config(1, 1, 32, 512), 32).empty());
  CHECK(rejection(m, testing::config(5, 1, 1, 8), 5, 8).find("training.parallelism.tp: tp 5 does not divide the 24") == 0);
  CHECK(rejection(m, testing::config(1, 5, 1, 8), 5).find("training.parallelism.pp: pp 5 does not divide the 24 layers") == 0);
  CHECK(rejection(m, testing::config(2, 2, 2, 8), 16).find("= 8 GPUs, but the cluster has 16") != std::string::npos);
  CHECK(rejection(m, testing::config(1, 1, 3, 8), 3).find("training.global_batch") == 0);
  CHECK(rejection(m, testing::config(1, 1, 2, 8, 3), 2).find("training.micro_batch") == 0);
  CHECK(rejection(m, testing::config(8, 1, 1, 8), 8, 4).find("spans more than one node") != std::string::npos);
}

TEST_CASE("a learned position table bounds the sequence, rotary positions do not") {
  ModelSpec m = testing::gpt(24, 2304, 24);  // learned positions, max_seq_len 2048
  TrainingConfig c = testing::config(1, 1, 8, 8);
  c.seq_len = 2048;
  CHECK(rejection(m, c, 8).empty());
  c.seq_len = 4096;
  CHECK(rejection(m, c, 8).find("training.seq_len: seq_len 4096 exceeds the 2048 positions") == 0);
  m.position = PositionKind::kRope;
  CHECK(rejection(m, c, 8).empty());
}

TEST_CASE("micro-batches and rank layout follow Megatron's order") {
  const ModelSpec m = testing::gpt(24, 2304, 24);
  const TrainingPlan plan(m, testing::config(2, 3, 4, 96, 2), 24, 8);
  CHECK(plan.micro_batches() == 96 / 4 / 2);
  CHECK(plan.layers_per_stage() == 8);
  CHECK(plan.rank(1, 0, 0, 0) == 1);                                          // TP fastest
  CHECK(plan.rank(0, 0, 1, 0) == 2);                                          // then DP
  CHECK(plan.rank(0, 0, 0, 1) == 8);                                          // then PP
  CHECK(plan.tp_group(2) == std::vector<std::uint32_t>{16, 17});
  CHECK(plan.dp_group(1) == std::vector<std::uint32_t>{8, 10, 12, 14});
}

TEST_CASE("uneven pipeline split: lighter first and last stages, as Llama 3 405B") {
  const ModelSpec m = testing::gpt(126, 2048, 16);
  TrainingConfig c = testing::config(1, 16, 1, 16);
  CHECK(rejection(m, c, 16).find("pp 16 does not divide the 126 layers") != std::string::npos);
  c.first_stage_layers = 7;
  c.last_stage_layers = 7;
  const TrainingPlan plan(m, c, 16, 8);
  CHECK(plan.layers_on_stage(0) == 7);
  CHECK(plan.layers_on_stage(1) == 8);
  CHECK(plan.layers_on_stage(15) == 7);
  CHECK(plan.first_layer(15, 0) == 119);
  int total = 0;
  for (int s = 0; s < 16; ++s) total += plan.layers_on_stage(s);
  CHECK(total == 126);
  // With two chunks per rank: 32 virtual stages, 3 + 30 x 4 + 3 layers.
  c.parallelism.vpp = 2;
  c.pipeline_schedule = "interleaved";
  c.first_stage_layers = 3;
  c.last_stage_layers = 3;
  const TrainingPlan interleaved(m, c, 16, 8);
  CHECK(interleaved.layers_in(0, 0) == 3);
  CHECK(interleaved.layers_in(0, 1) == 4);
  CHECK(interleaved.layers_in(15, 1) == 3);
  CHECK(interleaved.first_layer(0, 1) == 3 + 15 * 4);
  c.first_stage_layers = 4;
  CHECK(rejection(m, c, 16).find("training.first_stage_layers") == 0);
}
