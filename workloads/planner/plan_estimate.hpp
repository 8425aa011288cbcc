#pragma once
// The first stage of the search: a closed-form estimate of a candidate's iteration time, memory,
// power and cost, fast enough for every candidate (bench/planner_bench.cpp prints the rate).
//   per micro-batch and stage:  F_s, B_s = layers x per-layer pass time (layer_costs.hpp) + ends
//   pipeline (1F1B, GPipe):     (m - 1) max_s(F+B) + sum_s(F+B) + 2 (pp - 1) t_send
//   interleaved, v chunks:      m max_s(F+B) + (sum_s(F+B) - max_s(F+B)) / v + 2 (pp - 1) t_send
//                               (the bubble shrinks by v; Narayanan et al., SC'21, Section 2.2)
//   stage s ends its last backward sum_{s' < s}(B_s' / v + t_send) before stage 0; then its
//   gradient reduction (alpha-beta, comm_times.hpp; overlapped with the last backward when the
//   scenario says so), the optimizer step and the ZeRO-1/2 weight all-gather; ZeRO-3 waits
//   for per-layer weight gathers that a layer's compute does not hide. Weights are reduced and
//   gathered over their dp x cp replicas; a mixture of experts' routed experts over their
//   tp x cp x dp / (ep etp) replicas, after the dense ones on the same stream.
// Power: activities of the units over the iteration (models/power/gpu_power.hpp), with DVFS
// under a power cap; cost from models/cost.
#include <memory>

#include "workloads/planner/comm_times.hpp"
#include "workloads/planner/layer_costs.hpp"
#include "workloads/planner/memory_estimate.hpp"
#include "workloads/planner/planner_inputs.hpp"

namespace exasim::workloads::planner {

struct Estimate {
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  double compute_s = 0;       // kernels of the busiest stage
  double bubble_s = 0;        // pipeline fill and drain
  double exposed_comm_s = 0;  // data-parallel and pipeline communication not hidden
  double optimizer_s = 0;
  MemoryEstimate memory;
  double memory_capacity_bytes = 0;
  double gpu_power_w = 0;     // average per GPU
  double clock = 1;           // relative SM clock under the power cap
  double it_power_w = 0;
  double energy_per_token_j = 0;
  double usd_per_hour = 0;
  double usd_per_million_tokens = 0;
  double memory_headroom() const { return memory_capacity_bytes - memory.peak_bytes; }
};

class Estimator {
 public:
  explicit Estimator(const PlannerInputs& in);
  // Memory only (cheap): for the constraint check.
  MemoryEstimate memory(const Candidate& c);
  // Everything; the candidate must be runnable (check it first).
  Estimate estimate(const Candidate& c);
  // Block recompute: the fewest layers of each model chunk that, recomputed, bring the plan
  // within the GPU's memory less `margin`; 0 when none are needed (recompute none fits) or
  // when only every layer fits (full recompute: the plans without block recompute cover both).
  int fewest_recompute_layers(Candidate c, double margin);
  const PlannerInputs& inputs() const { return in_; }
  std::size_t layer_cost_entries() const { return layers_.size(); }

 private:
  // Per layer and micro-batch under `policy`.
  double policy_activation_bytes(const Candidate& c, models::Recompute policy);
  // Power under the cap (which may stretch the iteration), MFU, memory and cost of `e`, from the
  // per-iteration work of a mean GPU.
  void finish(Estimate& e, const PassCost& work, const Candidate& c);

  const PlannerInputs& in_;
  ModelNumbers numbers_;
  LayerCostTable layers_;
  CommTimes comm_;
  std::map<std::tuple<int, bool, int, int, int>, double> activations_;
};

}  // namespace exasim::workloads::planner
