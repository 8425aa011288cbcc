#include "workloads/planner/plan_constraints.hpp"

#include <algorithm>

#include "hw/error.hpp"
#include "hw/units.hpp"
#include "workloads/training/offload_costs.hpp"
#include "workloads/training/pipeline_schedule.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_plan.hpp"

namespace exasim::workloads::planner {

const std::pair<std::string, std::string>& LoweringProbe::refusal(const Candidate& c) {
  const auto key = std::make_tuple(static_cast<int>(c.schedule), static_cast<int>(c.zero), c.vpp > 1, c.ep > 1, c.cp > 1,
                                   c.etp > 1, static_cast<int>(c.offload));
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  // Two stages of two replicas (four when the plan has both ep and etp; twice that with hybrid
  // sharding, in two copies), two micro-batches each,
  // tp 1, cp 2 / ep 2 / etp 2 where the plan has them: every code path of the kind runs.
  Candidate small = c;
  small.tp = 1, small.pp = 2, small.micro_batch = 1;
  small.cp = c.cp > 1 ? 2 : 1;
  small.ep = c.ep > 1 && in_.model.moe && in_.model.moe->experts % 2 == 0 ? 2 : 1;
  small.etp = c.etp > 1 ? 2 : 1;
  small.dp = small.ep * small.etp > 2 ? 4 : 2;
  if (in_.base.shard_group > 0) small.dp *= 2;  // hybrid sharding: two copies of shard groups of dp x cp / 2
  small.vpp = c.vpp > 1 ? 2 : 1;
  small.first_stage_layers = small.last_stage_layers = 0;
  small.sequence_parallel = false;
  ModelSpec m = in_.model;
  m.layers = 2 * small.vpp;
  TrainingConfig cfg = candidate_config(in_.base, small);
  cfg.global_batch = 2 * small.dp;
  const int per_stage = small.dp * small.cp;
  if (in_.base.shard_group > 0) cfg.shard_group = per_stage / 2;
  std::pair<std::string, std::string> answer;
  try {
    const TrainingPlan plan(m, cfg, 2 * per_stage, 2 * per_stage);
    build_training_graph(plan, {in_.cluster.gpu, in_.calibration.kernel, in_.cluster.host ? &*in_.cluster.host : nullptr});
  } catch (const PlanError& e) {
    answer = {e.where().key, e.what()};
  }
  return cache_.emplace(key, answer).first->second;
}

CheckResult check_candidate(Estimator& estimator, LoweringProbe& probe, const Candidate& given, double memory_margin) {
  const PlannerInputs& in = estimator.inputs();
  const int gpn = in.cluster.gpus_per_node;
  CheckResult r;
  r.candidate = given;
  const Candidate& c = r.candidate;
  const bool across = in.space.allow_tp_across_nodes;
  if (!across && c.tp > gpn) {
    r.key = "training.parallelism.tp";
    r.reason = "tp " + std::to_string(c.tp) + " spans more than one node (" + std::to_string(gpn) + " GPUs)";
    return r;
  }
  if (c.tp <= gpn ? gpn % c.tp != 0 : c.tp % gpn != 0) {
    r.key = "training.parallelism.tp";
    r.reason = "tp " + std::to_string(c.tp) + " groups would straddle nodes of " + std::to_string(gpn) + " GPUs";
    return r;
  }
  try {
    const TrainingPlan plan(in.model, candidate_config(in.base, c), in.cluster.gpu_count(), across ? std::max(gpn, c.tp) : gpn);
  } catch (const PlanError& e) {
    r.key = e.where().key;
    r.reason = e.what();
    return r;
  }
  if (const auto& refused = probe.refusal(c); !refused.first.empty() || !refused.second.empty()) {
    r.key = refused.first.empty() ? "training" : refused.first;
    r.reason = refused.second;
    return r;
  }
  if (c.recompute_layers == Candidate::kFewestThatFit) {
    r.candidate.recompute_layers = estimator.fewest_recompute_layers(c, memory_margin);
    if (r.candidate.recompute_layers == 0) {
      r.key = "training.recompute_layers";
      r.reason = "block recompute adds nothing: the plan fits without recompute, or only with every layer recomputed";
      return r;
    }
  }
  r.memory = estimator.memory(c);
  const double usable = in.cluster.gpu.hbm_capacity_bytes * (1 - memory_margin);
  if (r.memory.peak_bytes > usable) {
    r.key = "memory";
    r.reason = "does not fit: needs " + units::format(r.memory.peak_bytes, units::Dimension::kBytes, 3) + " of " +
               units::format(usable, units::Dimension::kBytes, 3) + " per GPU";
    return r;
  }
  // ZeRO-Offload/Infinity: the node's GPUs keep their optimizer states in its host memory.
  const auto& host = in.cluster.host;
  if (c.offload > 0 && host && host->memory_bytes > 0) {
    const double needed = r.memory.host_bytes * gpn;
    if (needed > host->memory_bytes) {
      r.key = "training.offload";
      r.reason = "offload does not fit in host memory: needs " + units::format(needed, units::Dimension::kBytes, 3) + " of " +
                 units::format(host->memory_bytes, units::Dimension::kBytes, 3) + " per node";
      return r;
    }
  }
  r.runnable = true;
  return r;
}

}  // namespace exasim::workloads::planner
