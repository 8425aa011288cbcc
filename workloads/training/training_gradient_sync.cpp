// The gradient side of a training step's lowering: reduction over the data-parallel groups
// (DDP buckets, ZeRO reduce-scatters, hybrid sharding), the gradient norm, the optimizer step on
// the GPU or the host (ZeRO-Offload, ZeRO-Infinity), and the weights' all-gather after it.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "hw/error.hpp"
#include "models/kernel/kernel_models.hpp"
#include "workloads/training/offload_costs.hpp"
#include "workloads/training/training_lowering.hpp"
#include "workloads/training/training_memory.hpp"

namespace exasim::workloads::lowering {

// A collective over the stage's data-parallel group on `stream`.
sim::TaskId Lowering::dp_collective(int stage, sim::StreamId stream, sim::CommKind kind, double bytes,
                                     std::string_view label, Over group) {
  sim::TaskSpec t;
  t.label = label;
  t.kind = sim::TaskKind::kCollective;
  t.stream = stream;
  // A framework that reaches only part of the network's rate on its ZeRO collectives (those
  // over a shard group: ZeRO-1/2's gradient reduce-scatter and weight all-gather, ZeRO-3's
  // gathers, dense and expert) takes proportionally longer over them (calibration
  // training.sharded_collective_efficiency). DDP's all-reduce is not one of them.
  const bool sharded = (group == Over::kShard || group == Over::kExpertShard) && plan_.config().zero >= 1;
  const double wire_bytes = sharded ? bytes / k_.overheads.sharded_collective_efficiency : bytes;
  t.comm_op = comm(kind, wire_bytes,
                   group == Over::kExperts          ? plan_.expert_dp_group(stage)
                   : group == Over::kExpertShard    ? plan_.expert_shard_group(stage)
                   : group == Over::kExpertReplicas ? plan_.expert_replica_group(stage)
                   : group == Over::kShard          ? plan_.shard_group(stage)
                   : group == Over::kReplicas       ? plan_.replica_group(stage)
                                                    : plan_.dp_group(stage));
  t.bytes = bytes;
  t.category = kDataCommTask;
  return out_.graph.add_task(t);
}

double Lowering::param_fetch_rate() const {
  const double pcie = pcie_rate();
  if (plan_.config().offload != "nvme") return pcie;
  const topologies::HostSide& host = *k_.host;
  if (host.nvme_read <= 0 || host.nvme_write <= 0) {
    throw PlanError("offload nvme needs the NVMe bandwidth of the cluster's servers, which the catalog entry does not state",
                    {"", 0, "training.offload"}, "give cluster.node a server with nvme_read and nvme_write, or offload: params-cpu");
  }
  return workloads::param_fetch_rate(host, "nvme");
}

double Lowering::pcie_rate() const {
  if (!k_.host || k_.host->pcie_bandwidth <= 0) {
    throw PlanError("offload " + plan_.config().offload + " needs the node's host CPUs and GPU-host PCIe link, which the cluster does not describe",
                    {"", 0, "training.offload"}, "give cluster.node (a catalog server), or offload: none");
  }
  return host_copy_rate(*k_.host);  // offload_costs.hpp
}

sim::TaskId Lowering::reduce_gradients(int stage, double params, sim::TaskId after, const std::string& label, bool experts) {
  const StageStreams& st = out_.stages[stage];
  const double bytes = params * 2;  // 16-bit gradients (ZeRO paper's 2 Psi)
  sim::TaskId last = sim::kNone;
  auto chain = [&](sim::TaskId id) {
    out_.graph.add_dependency(last == sim::kNone ? after : last, id);
    last = id;
  };
  const int replicas = experts ? plan_.expert_replicas() : plan_.weight_replicas();
  if (plan_.config().zero < 1) {
    if (replicas > 1)
      chain(dp_collective(stage, st.dp_comm, sim::CommKind::kAllReduce, bytes, label, experts ? Over::kExperts : Over::kAll));
    return last;
  }
  const int shard = experts ? plan_.expert_shard_size() : plan_.shard_size();
  if (shard > 1)
    chain(dp_collective(stage, st.dp_comm, sim::CommKind::kReduceScatter, bytes, label, experts ? Over::kExpertShard : Over::kShard));
  if (replicas / shard > 1)
    chain(dp_collective(stage, st.dp_comm, sim::CommKind::kAllReduce, bytes / shard, label + " (across replicas)",
                        experts ? Over::kExpertReplicas : Over::kReplicas));
  return last;
}

// A kernel of the optimizer side (gradient norm, Adam step) on the stage's compute stream.
sim::TaskId Lowering::optimizer_kernel(int stage, std::string_view label, const models::KernelCost& cost) {
  sim::TaskSpec t;
  t.label = label;
  t.stream = out_.stages[stage].compute;
  t.duration = cost.time_s;
  t.bytes = cost.bytes;
  t.flops = cost.flops;
  t.category = kOptimizerTask;
  return out_.graph.add_task(t);
}

// Gradient reduction over the DP group, one bucket per layer as soon as its last backward is
// done (or all after the backward pass without overlap), then the optimizer step, then (ZeRO
// 1/2) the all-gather of the updated weight shards.
void Lowering::emit_gradient_sync(int stage) {
  const TrainingConfig& c = plan_.config();
  const StageStreams& st = out_.stages[stage];
  const int dp = plan_.weight_replicas();  // gradients are reduced over dp x cp
  const int shard = c.zero >= 1 ? plan_.shard_size() : 1;  // the dense states are split this many ways
  const SharedParameters split = stage_trainable_parameters(plan_, stage);  // all, or LoRA's adapters
  const double stage_params = split.total();
  const int edp = plan_.expert_replicas();  // routed experts' gradients: over their replicas
  const int expert_shard = c.zero >= 1 ? plan_.expert_shard_size() : 1;  // the experts' states are split this many ways
  std::vector<sim::TaskId> reductions;
  std::vector<double> reduced_owned;  // per reduction: the parameters of its bucket this GPU owns after it
  auto reduce = [&](double params, sim::TaskId ready, const std::string& label, bool experts = false) {
    if ((experts ? edp : dp) <= 1 || params <= 0) return;
    const sim::TaskId after = c.overlap_grad_reduce ? ready : last_backward_[stage];
    reductions.push_back(reduce_gradients(stage, params, after, label, experts));
    reduced_owned.push_back(params / (experts ? expert_shard : shard));
  };
  // One bucket per layer, queued in the order their gradients become final (task ids follow
  // the compute stream's program order), so no bucket waits behind a later one.
  std::vector<std::pair<sim::TaskId, int>> ready;  // (task, layer)
  for (const auto& [layer, task] : layer_grad_ready_[stage]) ready.emplace_back(task, layer);
  std::sort(ready.begin(), ready.end());
  // Under ZeRO-3 each backward already reduce-scattered its layer's gradients.
  double in_layers = 0;
  for (const auto& [task, layer] : ready) {
    const SharedParameters p = layer_trainable_parameters(plan_, layer);
    in_layers += p.dense;
    if (c.zero >= 3) continue;
    reduce(p.dense, task, "dp grads L" + std::to_string(layer));
    reduce(p.expert, task, "expert grads L" + std::to_string(layer), true);
  }
  reductions.insert(reductions.end(), sharded_reductions_[stage].begin(), sharded_reductions_[stage].end());
  reduced_owned.insert(reduced_owned.end(), sharded_owned_[stage].begin(), sharded_owned_[stage].end());
  const double outer = split.dense - in_layers;
  if (outer > 0) reduce(outer, last_backward_[stage], "dp grads embedding/head");

  // Gradient clipping: the global gradient norm, a read of the gradients this GPU holds and a
  // 4-byte all-reduce, before the optimizer may step.
  const double grads_held = c.zero >= 2 ? split.dense / shard + split.expert / expert_shard : stage_params;
  const sim::TaskId norm_id = optimizer_kernel(
      stage, "gradient norm", models::streaming_kernel(k_.gpu, k_.params, 2 * grads_held, 2 * grads_held));
  out_.graph.add_dependency(last_backward_[stage], norm_id);
  for (sim::TaskId r : reductions) out_.graph.add_dependency(r, norm_id);
  sim::TaskId norm_done = norm_id;
  if (dp > 1) {
    norm_done = dp_collective(stage, st.dp_comm, sim::CommKind::kAllReduce, 4, "gradient norm all-reduce");
    out_.graph.add_dependency(norm_id, norm_done);
  }

  // Adam with fp32 master weights: read grad, master, m, v (4 x 4 B), write master, m, v and
  // the 16-bit weight (3 x 4 + 2 B) = 30 B and ~12 FLOPs per parameter it owns.
  const double owned = c.zero >= 1 ? split.dense / shard + split.expert / expert_shard : stage_params;
  sim::TaskId opt_id = sim::kNone;  // after it the updated weights (this GPU's shard) are on the GPU
  if (c.offload != "none") {
    opt_id = emit_offloaded_step(stage, reductions, reduced_owned, norm_done, owned);
  } else {
    opt_id = optimizer_kernel(
        stage, "optimizer step", models::memory_op(k_.gpu, k_.params, models::MemoryOp::kAdam, DType::kBf16, owned, 1));
    out_.graph.add_dependency(norm_done, opt_id);
  }
  // With overlap_param_gather the next forward gathers them (emit_gathered_layer).
  if (c.zero >= 1 && c.zero <= 2 && shard > 1 && !overlaps_param_gather()) {  // ZeRO-3 keeps its weights sharded
    const sim::TaskId gather = dp_collective(stage, st.dp_comm, sim::CommKind::kAllGather, split.dense * 2,
                                             "dp weights all-gather", Over::kShard);
    out_.graph.add_dependency(opt_id, gather);
  }
  if (c.zero >= 1 && c.zero <= 2 && expert_shard > 1 && split.expert > 0 && !overlaps_param_gather()) {
    const sim::TaskId gather = dp_collective(stage, st.dp_comm, sim::CommKind::kAllGather, split.expert * 2,
                                             "expert weights all-gather", Over::kExpertShard);
    out_.graph.add_dependency(opt_id, gather);
  }
}

// ZeRO-Offload (Ren et al., ATC'21): each reduced gradient bucket (its owned share) is copied to
// the host as soon as it is ready, the host CPUs run Adam on the fp32 master weights once the
// gradient norm is known, and the updated 16-bit weights are copied back. One stream per GPU:
// copies and the host step are serial for it. The node's CPUs step for all its GPUs at once.
// Returns the task after which the new weights are on the GPU.
sim::TaskId Lowering::emit_offloaded_step(int stage, const std::vector<sim::TaskId>& reductions,
                                          const std::vector<double>& reduced_owned, sim::TaskId norm_done,
                                          double owned) {
  const TrainingConfig& c = plan_.config();
  const StageStreams& st = out_.stages[stage];
  const double pcie = pcie_rate();
  const topologies::HostSide& host = *k_.host;
  auto copy = [&](const std::string& label, double bytes, sim::TaskId after) {
    sim::TaskSpec t;
    t.label = label;
    t.stream = st.offload;
    t.duration = bytes / pcie;
    t.bytes = bytes;
    t.category = kOffloadTask;
    const sim::TaskId id = out_.graph.add_task(t);
    if (after != sim::kNone) out_.graph.add_dependency(after, id);
    return id;
  };
  if (reductions.empty()) copy("gradients to host", 2 * owned, last_backward_[stage]);
  for (std::size_t i = 0; i < reductions.size(); ++i)
    copy("gradients to host", 2 * reduced_owned[i], reductions[i]);
  // The host's Adam (offload_costs.hpp); ZeRO-Infinity on NVMe streams the states through the
  // node's drives as it goes.
  if (c.offload == "nvme") param_fetch_rate();  // throws when the drives are not described
  sim::TaskSpec step;
  step.label = "host optimizer step";
  step.stream = st.offload;
  step.duration = host_optimizer_time(host, c.offload, owned);
  step.flops = 12 * owned;
  step.bytes = 30 * owned;
  step.category = kOffloadTask;
  const sim::TaskId step_id = out_.graph.add_task(step);
  out_.graph.add_dependency(norm_done, step_id);
  // With parameter offload the updated weights stay on the host for the next gathers to fetch.
  if (offloads_params()) return step_id;
  return copy("weights to GPU", 2 * owned, step_id);
}

}  // namespace exasim::workloads::lowering
