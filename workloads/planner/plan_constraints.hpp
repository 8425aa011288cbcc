#pragma once
// Whether a candidate can run: the training layer's own validation (TrainingPlan: heads, ffn
// and layers divide, batch divides over replicas and micro-batches, GPU count, schedule), tensor
// parallelism inside a node's fabric unless the space allows otherwise (and then in whole-node
// blocks), and memory within the GPU's capacity less a margin. A block-recompute candidate
// (Candidate::kFewestThatFit) gets its layer count here, the fewest that fit.
#include <map>
#include <string>
#include <tuple>

#include "workloads/planner/plan_estimate.hpp"

namespace exasim::workloads::planner {

struct CheckResult {
  bool runnable = false;
  std::string key;     // scenario key at fault ("training.parallelism.tp", "memory", ...)
  std::string reason;  // one line
  MemoryEstimate memory;
  Candidate candidate;  // the one checked: block recompute's layer count set
};

// Whether the training lowering builds a candidate's kind of plan (some combinations of
// schedule, ZeRO stage and virtual stages are refused there, not by TrainingPlan): a small plan
// of the same kind is lowered once per (schedule, ZeRO stage, vpp > 1) and the answer kept.
class LoweringProbe {
 public:
  explicit LoweringProbe(const PlannerInputs& in) : in_(in) {}
  // Empty when the lowering accepts the kind; else its PlanError (key, message).
  const std::pair<std::string, std::string>& refusal(const Candidate& c);

 private:
  const PlannerInputs& in_;
  std::map<std::tuple<int, int, bool, bool, bool, bool, int>, std::pair<std::string, std::string>> cache_;
};

// memory_margin: fraction of the capacity that must stay free.
CheckResult check_candidate(Estimator& estimator, LoweringProbe& probe, const Candidate& c, double memory_margin);

}  // namespace exasim::workloads::planner
