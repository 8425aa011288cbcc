// The closed-form estimate of gradient reduction and the ZeRO-1 weight gather against the engine on
// nodes whose GPUs share one NIC, where data-parallel traffic sets the step time. The estimate once
// costed these collectives with a hierarchical algorithm the engine (and NCCL) does not choose
// automatically (ring: 59 ms for the 1.4 GB gather here, hierarchical 37 ms), and took a zero-bubble
// schedule's gradient buckets as hidden behind whole backward passes rather than the deferred
// weight-gradient passes that finish them: 10-18% optimistic.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <string>

#include "plan_checks.hpp"
#include "planner_fixture.hpp"
#include "workloads/planner/plan_estimate.hpp"
#include "workloads/planner/plan_space.hpp"
#include "workloads/training/pipeline_schedule.hpp"

using namespace exasim;
using namespace exasim::workloads;
using namespace exasim::workloads::planner;

namespace {

// A 1.3B-class GPT on 4 DGX A100-like nodes with a single HDR NIC each.
PlannerInputs one_nic_inputs(int pp, const std::string& schedule) {
  const int dp = 32 / pp;
  return PlannerInputs::from(testing::scenario_from_yaml(R"(
name: one-nic
cluster: {gpu: A100-SXM4-80GB, gpus_per_node: 8, nodes: 4, intra_node: nvswitch-a100,
          inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 1}}
model: {layers: 24, hidden: 2048, heads: 16, kv_heads: 16, ffn: 8192, vocab: 51200}
training: {seq_len: 2048, global_batch: 64, micro_batch: 1, precision: bf16, attention_kernel: flash, overlap_grad_reduce: true,
           zero: 1, recompute: none, pipeline_schedule: )" + schedule + ", parallelism: {tp: 1, pp: " + std::to_string(pp) +
                                                          ", dp: " + std::to_string(dp) + "}}\n"));
}

}  // namespace

TEST_CASE("data-parallel estimate within 5% of the engine on one-NIC nodes: 1F1B and zero-bubble") {
  for (const int pp : {2, 4})
    for (const std::string schedule : {"1f1b", "zero-bubble"}) {
      const PlannerInputs in = one_nic_inputs(pp, schedule);
      Estimator est(in);
      const Candidate c = candidate_of(in.base);
      const double estimate = est.estimate(c).iteration_time_s, engine = testing::engine_time(in, c);
      MESSAGE(describe(c), ": estimate ", estimate, " s, engine ", engine, " s");
      CHECK(estimate == exasim::testing::approx(engine).epsilon(0.05));
    }
}
