#include "workloads/training/training_graph.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "hw/error.hpp"
#include "models/cpu/cpu_gemm_model.hpp"
#include "models/cpu/cpu_memory_model.hpp"
#include "models/kernel/kernel_models.hpp"
#include "workloads/training/pipeline_schedule.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/transformer_ops.hpp"

namespace exasim::workloads {

namespace {

// A run of kernels between two communication points, costed once and instantiated many times.
struct Segment {
  bool is_comm = false;
  bool is_host = false;  // host work beside the kernel before it (time = its duration)
  bool beside = false;  // comm that always runs beside the kernel before it (the CP ring)
  std::string label;
  double time = 0, flops = 0, bytes = 0;  // compute
  std::uint32_t comm_op = sim::kNone;     // comm
};

// Kernel time of one op from the tile-level models (models/kernel/kernel_models.hpp). GEMMs run
// in the training precision; attention and memory-bound kernels on 16-bit activations when the
// GEMMs are fp8/fp4 (Transformer Engine keeps activations in bf16).
models::KernelCost cost_of(const Op& op, const KernelContext& k, DType dtype) {
  const DType act = (dtype == DType::kFp8 || dtype == DType::kFp4) ? DType::kBf16 : dtype;
  switch (op.kind) {
    case OpKind::kGemm: return models::gemm_time(k.gpu, k.params, dtype, op.m, op.n, op.k, op.batch);
    case OpKind::kAttention:
      return op.backward ? models::attention_backward(k.gpu, k.params, act, op.attention)
                         : models::attention_prefill(k.gpu, k.params, act, op.attention);
    default:
      if (op.memory_op) return models::memory_op(k.gpu, k.params, *op.memory_op, act, op.rows, op.cols);
      return models::streaming_kernel(k.gpu, k.params, op.bytes, op.flops);
  }
}

class Lowering {
 public:
  Lowering(const TrainingPlan& plan, const KernelContext& kernels) : plan_(plan), k_(kernels) {}
  TrainingGraph run();

 private:
  // The segments of one model chunk (all of a rank's layers without interleaving).
  struct ChunkSegments {
    std::vector<std::vector<Segment>> fwd, bwd, rec;  // per layer of the chunk
    std::vector<std::vector<Segment>> wgt;            // weight gradients, when the schedule splits them off
    std::vector<Segment> embed_fwd, embed_bwd, head_fwd, head_bwd;
  };
  // A pipeline position: rank and model chunk. Virtual stage = chunk * pp + rank.
  struct Place {
    int stage = 0, chunk = 0;
  };
  struct Pass {
    sim::TaskId first = sim::kNone, last = sim::kNone;
  };

  std::vector<Segment> segments(const std::vector<Op>& ops, const std::string& prefix, int stage);
  std::uint32_t comm(sim::CommKind kind, double bytes, std::vector<std::uint32_t> ranks);
  sim::TaskId emit(const std::vector<Segment>& segs, int stage, std::uint16_t category, Pass& pass);
  Pass emit_pass(int stage, const PipelineStep& step);
  void emit_layer(const std::vector<Segment>& segs, int stage, std::uint16_t category, Pass& pass, bool backward);
  // Which of a stage's data-parallel groups: all ranks holding the same weights (dp x cp), one
  // hybrid-sharding group of them, the groups' first members (their replicas), or the ranks
  // holding the same routed experts.
  enum class Over { kAll, kShard, kReplicas, kExperts };
  sim::TaskId dp_collective(int stage, sim::StreamId stream, sim::CommKind kind, double bytes, std::string_view label,
                            Over group = Over::kAll);
  // Gradients of `params` parameters reduced as sharding wants: all-reduce without sharding,
  // reduce-scatter over the shard group and then, with hybrid sharding, an all-reduce of the
  // shard over the replicas. Returns the last task (kNone when nothing needs reducing).
  sim::TaskId reduce_gradients(int stage, double params, sim::TaskId after, const std::string& label);
  void emit_p2p(Place from, Place to, bool forward, int micro_batch);
  std::optional<Place> neighbour(Place p, bool forward) const;
  void emit_gradient_sync(int stage);
  sim::TaskId emit_offloaded_step(int stage, const std::vector<sim::TaskId>& reductions,
                                  const std::vector<double>& reduced_params, sim::TaskId norm_done, double owned);
  void add_stage(int stage);
  void build_stage_segments(int stage);

  const TrainingPlan& plan_;
  const KernelContext& k_;
  TrainingGraph out_;
  std::map<std::tuple<int, double, std::vector<std::uint32_t>>, std::uint32_t> comm_index_;
  std::vector<std::vector<ChunkSegments>> seg_;                  // [stage][chunk]
  std::map<std::tuple<bool, int, int, int>, Pass> passes_;       // (forward, stage, chunk, micro-batch)
  std::vector<std::map<int, sim::TaskId>> layer_grad_ready_;     // [stage]: layer -> its last backward task
  std::vector<sim::TaskId> last_backward_;                   // [stage]: its last gradient task
  bool split_weight_ = false;                                // weight gradients in passes of their own
  std::vector<sim::TaskId> gather_gate_;                     // [stage]: the task that frees the next gather's buffer
  std::vector<std::vector<sim::TaskId>> sharded_reductions_; // [stage]: ZeRO-3 per-micro-batch reduce-scatters
  std::vector<std::vector<double>> sharded_params_;          // [stage]: the parameters each of them reduced
  double pcie_rate() const;                                  // B/s of a pinned host copy; throws without a host
  bool offloads_params() const { return plan_.config().offload == "params-cpu" || plan_.config().offload == "nvme"; }
  double param_fetch_rate() const;                           // B/s: PCIe, or this GPU's share of the NVMe drives
  bool has_host_work() const {
    return k_.overheads.micro_batch_s > 0 || k_.overheads.iteration_s > 0 ||
           (k_.overheads.expert_dispatch_s > 0 && plan_.model().moe.has_value());
  }
  // The host's share of dispatching a pass (half a micro-batch's overhead), which the pass waits
  // for; added before the pass, so that it precedes the pass's own host work on the host stream.
  sim::TaskId emit_host_dispatch(int stage);
};

std::uint32_t Lowering::comm(sim::CommKind kind, double bytes, std::vector<std::uint32_t> ranks) {
  auto key = std::make_tuple(static_cast<int>(kind), bytes, ranks);
  if (auto it = comm_index_.find(key); it != comm_index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(out_.comm_ops.size());
  out_.comm_ops.push_back({kind, bytes, std::move(ranks)});
  comm_index_.emplace(std::move(key), id);
  return id;
}

std::vector<Segment> Lowering::segments(const std::vector<Op>& ops, const std::string& prefix, int stage) {
  std::vector<Segment> out;
  Segment cur;
  std::string first, last;
  auto flush = [&] {
    if (first.empty()) return;
    cur.label = prefix + " " + first + (first == last ? "" : ".." + last);
    out.push_back(cur);
    cur = Segment{};
    first.clear();
  };
  for (const Op& op : ops) {
    if (op.kind == OpKind::kHost) {
      const double t = op.host_units * k_.overheads.expert_dispatch_s;
      if (t <= 0) continue;
      flush();
      Segment h;
      h.is_host = true;
      h.time = t;
      h.label = prefix + " " + std::string(op.name);
      out.push_back(h);
      continue;
    }
    if (op.kind == OpKind::kComm) {
      flush();
      Segment c;
      c.is_comm = true;
      c.label = prefix + " " + std::string(op.name);
      c.comm_op = comm(op.comm, op.comm_bytes,
                       op.group == CommGroup::kContext  ? plan_.cp_group(stage)
                       : op.group == CommGroup::kExpert ? plan_.ep_group(stage)
                       : op.group == CommGroup::kExpertTensor ? plan_.etp_group(stage)
                                                        : plan_.tp_group(stage));
      c.beside = op.group == CommGroup::kContext;
      out.push_back(c);
      continue;
    }
    const models::KernelCost cost = cost_of(op, k_, plan_.config().precision);
    if (first.empty()) first = op.name;
    last = op.name;
    cur.time += cost.time_s;
    cur.flops += cost.flops;
    cur.bytes += cost.bytes;
  }
  flush();
  return out;
}

void Lowering::build_stage_segments(int stage) {
  const LayerDims d = LayerDims::from(plan_.model(), plan_.config());
  const int pp = plan_.par().pp;
  std::vector<ChunkSegments> chunks;
  for (int c = 0; c < plan_.chunks(); ++c) {
    ChunkSegments s;
    const int first_layer = plan_.first_layer(stage, c);
    for (int l = 0; l < plan_.layers_in(stage, c); ++l) {
      const std::string tag = "L" + std::to_string(first_layer + l);
      const LayerDims dl = d.for_layer(plan_.model(), first_layer + l);
      s.fwd.push_back(segments(layer_forward(dl), "fwd " + tag, stage));
      std::vector<Op> backward = layer_backward(dl), weight;
      if (split_weight_) {  // input-gradient pass now, weight-gradient pass later
        auto is_w = [](const Op& op) { return op.weight_grad; };
        std::copy_if(backward.begin(), backward.end(), std::back_inserter(weight), is_w);
        backward.erase(std::remove_if(backward.begin(), backward.end(), is_w), backward.end());
      }
      s.bwd.push_back(segments(backward, "bwd " + tag, stage));
      s.wgt.push_back(segments(weight, "wgrad " + tag, stage));
      s.rec.push_back(segments(layer_recompute(dl, plan_.config().recompute), "recompute " + tag, stage));
    }
    if (stage == 0 && c == 0) {
      s.embed_fwd = segments(embedding_forward(d), "fwd", stage);
      s.embed_bwd = segments(embedding_backward(d), "bwd", stage);
    }
    if (stage == pp - 1 && c == plan_.chunks() - 1) {
      s.head_fwd = segments(head_forward(d), "fwd", stage);
      s.head_bwd = segments(head_backward(d), "bwd", stage);
    }
    chunks.push_back(std::move(s));
  }
  seg_.push_back(std::move(chunks));
}

// Emits segments in order on the stage's streams, chained after pass.last.
// Emits segments in order on the stage's streams, chained after pass.last. With TP
// communication overlap (Megatron-Core/Transformer Engine userbuffers) a collective runs beside
// the kernels that produce it, chunk by chunk, and the next kernels wait for both.
sim::TaskId Lowering::emit(const std::vector<Segment>& segs, int stage, std::uint16_t category, Pass& pass) {
  const StageStreams& st = out_.stages[stage];
  const bool overlap = plan_.config().tp_comm_overlap;
  sim::TaskId before_compute = sim::kNone;  // what the latest compute segment waited for
  sim::TaskId last_compute = sim::kNone;
  bool after_beside_host = false;  // the previous segment was host work beside the kernels before it
  for (const Segment& s : segs) {
    sim::TaskSpec t;
    t.label = s.label;
    if (s.is_host) {
      // The host issues the kernels of the segment before it as they run: it starts when that
      // segment could (what it waited for), and whatever follows waits for both.
      t.kind = sim::TaskKind::kHost;
      t.stream = st.host;
      t.duration = s.time;
      t.category = kHostTask;
      const sim::TaskId id = out_.graph.add_task(t);
      const sim::TaskId from = last_compute != sim::kNone && pass.last == last_compute ? before_compute : pass.last;
      if (from != sim::kNone) out_.graph.add_dependency(from, id);
      if (pass.first == sim::kNone) pass.first = id;
      pass.last = id;
      after_beside_host = last_compute != sim::kNone;
      continue;
    }
    if (s.is_comm) {
      t.kind = sim::TaskKind::kCollective;
      t.stream = st.tp_comm;
      t.comm_op = s.comm_op;
      t.bytes = out_.comm_ops[s.comm_op].bytes;
      t.category = kTensorCommTask;
    } else {
      t.stream = st.compute;
      t.duration = s.time;
      t.flops = s.flops;
      t.bytes = s.bytes;
      t.category = category;
    }
    const sim::TaskId id = out_.graph.add_task(t);
    const bool beside = (overlap || s.beside) && s.is_comm && pass.last == last_compute && last_compute != sim::kNone;
    const sim::TaskId after = beside ? before_compute : pass.last;
    if (after != sim::kNone) out_.graph.add_dependency(after, id);
    if (after_beside_host) out_.graph.add_dependency(last_compute, id);  // the kernels the host work ran beside
    after_beside_host = false;
    if (!s.is_comm) {
      // A kernel after an overlapped collective also waits for the kernels the collective ran beside.
      if (pass.last != sim::kNone && out_.graph.task(pass.last).kind == sim::TaskKind::kCollective && last_compute != sim::kNone)
        out_.graph.add_dependency(last_compute, id);
      before_compute = pass.last;
      last_compute = id;
    }
    if (pass.first == sim::kNone) pass.first = id;
    pass.last = id;
  }
  return pass.last;
}

Lowering::Pass Lowering::emit_pass(int stage, const PipelineStep& step) {
  const ChunkSegments& s = seg_[stage][step.chunk];
  const int layers = plan_.layers_in(stage, step.chunk), first_layer = plan_.first_layer(stage, step.chunk);
  Pass pass;
  if (step.weight) {  // the deferred weight gradients; a layer's gradient is final after them
    for (int l = layers - 1; l >= 0; --l) {
      emit(s.wgt[l], stage, kBackwardTask, pass);
      layer_grad_ready_[stage][first_layer + l] = pass.last;
    }
    last_backward_[stage] = pass.last;
    return pass;
  }
  if (step.forward) {
    emit(s.embed_fwd, stage, kForwardTask, pass);
    for (const auto& layer : s.fwd) emit_layer(layer, stage, kForwardTask, pass, false);
    emit(s.head_fwd, stage, kForwardTask, pass);
    return pass;
  }
  emit(s.head_bwd, stage, kBackwardTask, pass);
  for (int l = layers - 1; l >= 0; --l) {
    emit_layer(s.rec[l], stage, kRecomputeTask, pass, false);
    emit_layer(s.bwd[l], stage, kBackwardTask, pass, true);
    if (!split_weight_) layer_grad_ready_[stage][first_layer + l] = pass.last;
  }
  emit(s.embed_bwd, stage, kBackwardTask, pass);
  last_backward_[stage] = pass.last;
  return pass;
}

// A collective over the stage's data-parallel group on `stream`.
sim::TaskId Lowering::dp_collective(int stage, sim::StreamId stream, sim::CommKind kind, double bytes,
                                     std::string_view label, Over group) {
  sim::TaskSpec t;
  t.label = label;
  t.kind = sim::TaskKind::kCollective;
  t.stream = stream;
  t.comm_op = comm(kind, bytes,
                   group == Over::kExperts    ? plan_.expert_dp_group(stage)
                   : group == Over::kShard    ? plan_.shard_group(stage)
                   : group == Over::kReplicas ? plan_.replica_group(stage)
                                              : plan_.dp_group(stage));
  t.bytes = bytes;
  t.category = kDataCommTask;
  return out_.graph.add_task(t);
}

// A layer's segments; under ZeRO-3 (FSDP) its weights are all-gathered first, the gather of the
// next layer starting as this one starts (prefetch depth one), and a backward reduce-scatters
// its gradients right away (Rajbhandari et al., SC'20, Section 5.3: 3 x Psi per step).
void Lowering::emit_layer(const std::vector<Segment>& segs, int stage, std::uint16_t category, Pass& pass,
                          bool backward) {
  const bool sharded = plan_.config().zero >= 3 && plan_.shard_size() > 1 && !segs.empty();
  if (!sharded) {
    emit(segs, stage, category, pass);
    return;
  }
  const double weight_bytes = plan_.model().layer_parameter_count() / plan_.par().tp * 2;
  const sim::TaskId gather = dp_collective(stage, out_.stages[stage].dp_gather, sim::CommKind::kAllGather,
                                           weight_bytes, backward ? "fsdp gather (bwd)" : "fsdp gather (fwd)", Over::kShard);
  if (offloads_params()) {
    // ZeRO-Infinity (Rajbhandari et al., SC'21): the GPU's shard of the layer lives in host memory
    // (or on the node's NVMe drives, which its GPUs share) and crosses PCIe before the gather; it
    // is prefetched as the gather is.
    sim::TaskSpec t;
    t.label = "params to GPU";
    t.stream = out_.stages[stage].param_fetch;
    t.bytes = weight_bytes / plan_.shard_size();
    t.duration = t.bytes / param_fetch_rate();
    t.category = kOffloadTask;
    const sim::TaskId fetch = out_.graph.add_task(t);
    if (gather_gate_[stage] != sim::kNone) out_.graph.add_dependency(gather_gate_[stage], fetch);
    out_.graph.add_dependency(fetch, gather);
  }
  if (gather_gate_[stage] != sim::kNone) out_.graph.add_dependency(gather_gate_[stage], gather);
  Pass layer{sim::kNone, pass.last};  // chained after the pass so far; `first` is the layer's first task
  emit(segs, stage, category, layer);
  if (pass.first == sim::kNone) pass.first = layer.first;
  pass.last = layer.last;
  out_.graph.add_dependency(gather, layer.first);
  gather_gate_[stage] = layer.first;  // the next gather overlaps this layer's kernels
  if (backward) {
    const sim::TaskId done = reduce_gradients(stage, weight_bytes / 2, pass.last, "fsdp reduce-scatter grads");
    if (done != sim::kNone) {
      sharded_reductions_[stage].push_back(done);
      sharded_params_[stage].push_back(weight_bytes / 2);
    }
  }
}

sim::TaskId Lowering::emit_host_dispatch(int stage) {
  if (k_.overheads.micro_batch_s <= 0) return sim::kNone;
  sim::TaskSpec t;
  t.label = "host dispatch";
  t.stream = out_.stages[stage].host;
  t.duration = k_.overheads.micro_batch_s / 2;
  t.category = kHostTask;
  t.kind = sim::TaskKind::kHost;
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
  return std::min(pcie, host.nvme_read / host.gpus_per_node);  // the node's GPUs fetch at once
}

double Lowering::pcie_rate() const {
  if (!k_.host || k_.host->pcie_bandwidth <= 0) {
    throw PlanError("offload " + plan_.config().offload + " needs the node's host CPUs and GPU-host PCIe link, which the cluster does not describe",
                    {"", 0, "training.offload"}, "give cluster.node (a catalog server), or offload: none");
  }
  // Pinned cudaMemcpy reaches ~80% of a PCIe x16 link (estimate: ~25 of 31.5 GB/s on Gen4,
  // ~50 of 63 GB/s on Gen5, as nvbandwidth reports on DGX systems).
  return 0.8 * k_.host->pcie_bandwidth;
}

sim::TaskId Lowering::reduce_gradients(int stage, double params, sim::TaskId after, const std::string& label) {
  const StageStreams& st = out_.stages[stage];
  const double bytes = params * 2;  // 16-bit gradients (ZeRO paper's 2 Psi)
  sim::TaskId last = sim::kNone;
  auto chain = [&](sim::TaskId id) {
    out_.graph.add_dependency(last == sim::kNone ? after : last, id);
    last = id;
  };
  if (plan_.config().zero < 1) {
    if (plan_.weight_replicas() > 1) chain(dp_collective(stage, st.dp_comm, sim::CommKind::kAllReduce, bytes, label));
    return last;
  }
  if (plan_.shard_size() > 1)
    chain(dp_collective(stage, st.dp_comm, sim::CommKind::kReduceScatter, bytes, label, Over::kShard));
  if (plan_.shard_replicas() > 1)
    chain(dp_collective(stage, st.dp_comm, sim::CommKind::kAllReduce, bytes / plan_.shard_size(), label + " (across replicas)",
                        Over::kReplicas));
  return last;
}

// The next virtual stage in the pass's direction (forward: towards the loss), if any.
std::optional<Lowering::Place> Lowering::neighbour(Place p, bool forward) const {
  const int pp = plan_.par().pp;
  const int v = p.chunk * pp + p.stage + (forward ? 1 : -1);
  if (v < 0 || v >= pp * plan_.chunks()) return std::nullopt;
  return Place{v % pp, v / pp};
}

// The send of a pass's output to the neighbouring stage, which that stage's pass waits for.
void Lowering::emit_p2p(Place from, Place to, bool forward, int micro_batch) {
  const LayerDims d = LayerDims::from(plan_.model(), plan_.config());
  // Megatron's scatter/gather optimization: each TP rank sends 1/t of the activation.
  const double bytes = d.tokens * d.hidden * d.act_bytes / plan_.par().tp;
  sim::TaskSpec t;
  t.label = forward ? "send activations" : "send gradients";
  t.kind = sim::TaskKind::kSendRecv;
  t.stream = out_.stages[from.stage].p2p;
  t.comm_op = comm(sim::CommKind::kSendRecv, bytes, {plan_.rank(0, 0, 0, from.stage), plan_.rank(0, 0, 0, to.stage)});
  t.bytes = bytes;
  t.category = kPipelineCommTask;
  const sim::TaskId id = out_.graph.add_task(t);
  out_.graph.add_dependency(passes_.at({forward, from.stage, from.chunk, micro_batch}).last, id);
  out_.graph.add_dependency(id, passes_.at({forward, to.stage, to.chunk, micro_batch}).first);
}

void Lowering::add_stage(int stage) {
  const std::string name = "stage" + std::to_string(stage);
  StageStreams st;
  st.device = out_.graph.add_device(name);
  st.compute = out_.graph.add_stream(st.device, sim::StreamKind::kCompute, name + "/compute");
  st.tp_comm = out_.graph.add_stream(st.device, sim::StreamKind::kComm, name + "/tp");
  st.dp_comm = out_.graph.add_stream(st.device, sim::StreamKind::kComm, name + "/dp");
  st.p2p = out_.graph.add_stream(st.device, sim::StreamKind::kComm, name + "/p2p");
  if (plan_.config().zero >= 3) st.dp_gather = out_.graph.add_stream(st.device, sim::StreamKind::kComm, name + "/dp-gather");
  if (plan_.config().offload != "none")
    st.offload = out_.graph.add_stream(st.device, sim::StreamKind::kComm, name + "/offload");
  if (offloads_params()) st.param_fetch = out_.graph.add_stream(st.device, sim::StreamKind::kCopy, name + "/param-fetch");
  if (has_host_work()) st.host = out_.graph.add_stream(st.device, sim::StreamKind::kCopy, name + "/host");
  out_.stages.push_back(st);
}

// Gradient reduction over the DP group, one bucket per layer as soon as its last backward is
// done (or all after the backward pass without overlap), then the optimizer step, then (ZeRO
// 1/2) the all-gather of the updated weight shards.
void Lowering::emit_gradient_sync(int stage) {
  const TrainingConfig& c = plan_.config();
  const StageStreams& st = out_.stages[stage];
  const int dp = plan_.weight_replicas();  // gradients are reduced over dp x cp
  const int shard = c.zero >= 1 ? plan_.shard_size() : 1;  // the dense states are split this many ways
  const double grad_bytes = 2;  // 16-bit gradients (ZeRO paper's 2 Psi)
  const SharedParameters split = stage_parameters(plan_, stage);
  const double stage_params = split.total();
  const int edp = plan_.expert_replicas();  // routed experts' gradients: over their replicas
  const auto kind = c.zero >= 1 ? sim::CommKind::kReduceScatter : sim::CommKind::kAllReduce;
  std::vector<sim::TaskId> reductions;
  std::vector<double> reduced_params;  // per reduction: the parameters of its bucket
  auto reduce = [&](double params, sim::TaskId ready, const std::string& label, bool experts = false) {
    if ((experts ? edp : dp) <= 1 || params <= 0) return;
    const sim::TaskId after = c.overlap_grad_reduce ? ready : last_backward_[stage];
    sim::TaskId id = sim::kNone;
    if (experts) {
      id = dp_collective(stage, st.dp_comm, kind, params * grad_bytes, label, Over::kExperts);
      out_.graph.add_dependency(after, id);
    } else {
      id = reduce_gradients(stage, params, after, label);
    }
    reductions.push_back(id);
    reduced_params.push_back(params);
  };
  // One bucket per layer, queued in the order their gradients become final (task ids follow
  // the compute stream's program order), so no bucket waits behind a later one.
  std::vector<std::pair<sim::TaskId, int>> ready;  // (task, layer)
  for (const auto& [layer, task] : layer_grad_ready_[stage]) ready.emplace_back(task, layer);
  std::sort(ready.begin(), ready.end());
  // Under ZeRO-3 each backward already reduce-scattered its layer's gradients.
  double in_layers = 0;
  for (const auto& [task, layer] : ready) {
    const SharedParameters p = layer_parameters(plan_, layer);
    in_layers += p.dense;
    if (c.zero >= 3) continue;
    reduce(p.dense, task, "dp grads L" + std::to_string(layer));
    reduce(p.expert, task, "expert grads L" + std::to_string(layer), true);
  }
  reductions.insert(reductions.end(), sharded_reductions_[stage].begin(), sharded_reductions_[stage].end());
  reduced_params.insert(reduced_params.end(), sharded_params_[stage].begin(), sharded_params_[stage].end());
  const double outer = split.dense - in_layers;
  if (outer > 0) reduce(outer, last_backward_[stage], "dp grads embedding/head");

  // Gradient clipping: the global gradient norm, a read of the gradients this GPU holds and a
  // 4-byte all-reduce, before the optimizer may step.
  const double grads_held = c.zero >= 2 ? split.dense / shard + split.expert / edp : stage_params;
  const models::KernelCost norm = models::streaming_kernel(k_.gpu, k_.params, 2 * grads_held, 2 * grads_held);
  sim::TaskSpec norm_task;
  norm_task.label = "gradient norm";
  norm_task.stream = st.compute;
  norm_task.duration = norm.time_s;
  norm_task.bytes = norm.bytes;
  norm_task.flops = norm.flops;
  norm_task.category = kOptimizerTask;
  const sim::TaskId norm_id = out_.graph.add_task(norm_task);
  out_.graph.add_dependency(last_backward_[stage], norm_id);
  for (sim::TaskId r : reductions) out_.graph.add_dependency(r, norm_id);
  sim::TaskId norm_done = norm_id;
  if (dp > 1) {
    norm_done = dp_collective(stage, st.dp_comm, sim::CommKind::kAllReduce, 4, "gradient norm all-reduce");
    out_.graph.add_dependency(norm_id, norm_done);
  }

  // Adam with fp32 master weights: read grad, master, m, v (4 x 4 B), write master, m, v and
  // the 16-bit weight (3 x 4 + 2 B) = 30 B and ~12 FLOPs per parameter it owns.
  const double owned = c.zero >= 1 ? split.dense / shard + split.expert / edp : stage_params;
  if (c.offload != "none") {
    const sim::TaskId weights_back = emit_offloaded_step(stage, reductions, reduced_params, norm_done, owned);
    if (c.zero >= 1 && c.zero <= 2 && shard > 1) {  // ZeRO-3 keeps its weights sharded
      const sim::TaskId gather = dp_collective(stage, st.dp_comm, sim::CommKind::kAllGather, stage_params * 2,
                                               "dp weights all-gather", Over::kShard);
      out_.graph.add_dependency(weights_back, gather);
    }
    return;
  }
  const models::KernelCost step = models::memory_op(k_.gpu, k_.params, models::MemoryOp::kAdam, DType::kBf16, owned, 1);
  sim::TaskSpec opt;
  opt.label = "optimizer step";
  opt.stream = st.compute;
  opt.duration = step.time_s;
  opt.flops = step.flops;
  opt.bytes = step.bytes;
  opt.category = kOptimizerTask;
  const sim::TaskId opt_id = out_.graph.add_task(opt);
  out_.graph.add_dependency(norm_done, opt_id);
  if (c.zero >= 1 && c.zero <= 2 && shard > 1) {  // ZeRO-3 keeps its weights sharded
    const sim::TaskId gather = dp_collective(stage, st.dp_comm, sim::CommKind::kAllGather, split.dense * 2,
                                             "dp weights all-gather", Over::kShard);
    out_.graph.add_dependency(opt_id, gather);
  }
  if (c.zero >= 1 && c.zero <= 2 && edp > 1 && split.expert > 0) {
    const sim::TaskId gather = dp_collective(stage, st.dp_comm, sim::CommKind::kAllGather, split.expert * 2,
                                             "expert weights all-gather", Over::kExperts);
    out_.graph.add_dependency(opt_id, gather);
  }
}

// ZeRO-Offload (Ren et al., ATC'21): each reduced gradient bucket (its owned share) is copied to
// the host as soon as it is ready, the host CPUs run Adam on the fp32 master weights once the
// gradient norm is known, and the updated 16-bit weights are copied back. One stream per GPU:
// copies and the host step are serial for it. The node's CPUs step for all its GPUs at once.
// Returns the task after which the new weights are on the GPU.
sim::TaskId Lowering::emit_offloaded_step(int stage, const std::vector<sim::TaskId>& reductions,
                                          const std::vector<double>& reduced_params, sim::TaskId norm_done,
                                          double owned) {
  const TrainingConfig& c = plan_.config();
  const StageStreams& st = out_.stages[stage];
  const double pcie = pcie_rate();
  const topologies::HostSide& host = *k_.host;
  const double share = 1.0 / (c.zero >= 1 ? plan_.shard_size() : 1);  // of each bucket this GPU owns
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
    copy("gradients to host", 2 * reduced_params[i] * share, reductions[i]);
  // Host Adam: per parameter read the fp32 gradient, master weight and two moments (16 B), write
  // the master, the moments and the 16-bit copy (14 B); memory-bound on the sockets' DRAM, which
  // the node's GPUs share.
  const models::CpuParams cpu = models::CpuParams::defaults_for(host.cpu);
  const double per_socket = owned * host.gpus_per_node / host.cpus_per_node;
  const double ws = std::numeric_limits<double>::max() / 4;  // far beyond any cache
  const double stream = models::cpu_stream_time(cpu, 16 * per_socket, 14 * per_socket, ws, host.cpu.cores);
  const double compute = 12 * per_socket / models::cpu_peak_flops(host.cpu, DType::kFp32, host.cpu.cores);
  // ZeRO-Infinity on NVMe: the fp32 master weights and both moments (12 B per parameter) and the
  // 16-bit parameters (2 B) are read from and written back to the node's drives, in chunks that
  // overlap the CPU's update (its pipelined optimizer step): the slowest of the three sets the time.
  double drives = 0;
  if (c.offload == "nvme") {
    param_fetch_rate();  // throws when the drives are not described
    const double per_node = 14 * owned * host.gpus_per_node;
    drives = std::max(per_node / host.nvme_read, per_node / host.nvme_write);
  }
  sim::TaskSpec step;
  step.label = "host optimizer step";
  step.stream = st.offload;
  step.duration = std::max({stream, compute, drives});
  step.flops = 12 * owned;
  step.bytes = 30 * owned;
  step.category = kOffloadTask;
  const sim::TaskId step_id = out_.graph.add_task(step);
  out_.graph.add_dependency(norm_done, step_id);
  // With parameter offload the updated weights stay on the host for the next gathers to fetch.
  if (offloads_params()) return step_id;
  return copy("weights to GPU", 2 * owned, step_id);
}

TrainingGraph Lowering::run() {
  const int pp = plan_.par().pp;
  const ScheduleInfo* schedule = find_pipeline_schedule(plan_.config().pipeline_schedule);
  if (!schedule) {
    throw PlanError("pipeline schedule \"" + plan_.config().pipeline_schedule + "\" is not simulated yet",
                    {"", 0, "training.pipeline_schedule"}, "use gpipe, 1f1b, interleaved, zero-bubble or breadth-first");
  }
  split_weight_ = schedule->splits_weight_grad;
  if (split_weight_ && plan_.config().zero >= 3) {
    throw PlanError("the zero-bubble schedule with ZeRO-3 is not simulated yet", {"", 0, "training.zero"},
                    "use zero: 0..2 with zero-bubble, or 1f1b with ZeRO-3");
  }
  layer_grad_ready_.assign(pp, {});
  last_backward_.assign(pp, sim::kNone);
  gather_gate_.assign(pp, sim::kNone);
  sharded_reductions_.assign(pp, {});
  sharded_params_.assign(pp, {});
  for (int s = 0; s < pp; ++s) {
    add_stage(s);
    build_stage_segments(s);
  }
  // Every stage's passes in its schedule order; cross-stage sends are wired afterwards.
  std::vector<std::vector<PipelineStep>> orders;
  for (int s = 0; s < pp; ++s) {
    orders.push_back(schedule->order(s, pp, plan_.micro_batches(), plan_.chunks()));
    for (const PipelineStep& step : orders[s]) {
      const sim::TaskId dispatch = step.weight ? sim::kNone : emit_host_dispatch(s);
      const Pass pass = emit_pass(s, step);
      if (dispatch != sim::kNone && pass.first != sim::kNone && pass.first != dispatch) out_.graph.add_dependency(dispatch, pass.first);
      if (!step.weight) {
        passes_[{step.forward, s, step.chunk, step.micro_batch}] = pass;
      } else if (pass.first != sim::kNone) {  // after its own input-gradient pass
        out_.graph.add_dependency(passes_.at({false, s, step.chunk, step.micro_batch}).last, pass.first);
      }
    }
  }
  // A backward needs its own forward to have finished, collectives included (the loss all-reduce).
  for (const auto& [key, pass] : passes_) {
    const auto& [forward, stage, chunk, micro_batch] = key;
    if (!forward) out_.graph.add_dependency(passes_.at({true, stage, chunk, micro_batch}).last, pass.first);
  }
  for (int s = 0; s < pp; ++s) {
    for (const PipelineStep& step : orders[s]) {
      if (step.weight) continue;  // weight gradients stay on their stage
      const Place here{s, step.chunk};
      if (auto next = neighbour(here, step.forward)) emit_p2p(here, *next, step.forward, step.micro_batch);
    }
    emit_gradient_sync(s);
    if (k_.overheads.iteration_s > 0) {  // after everything the stage ran
      sim::TaskSpec t;
      t.label = "host iteration end";
      t.stream = out_.stages[s].host;
      t.duration = k_.overheads.iteration_s;
      t.category = kHostTask;
      t.kind = sim::TaskKind::kHost;
      const sim::TaskId end = out_.graph.add_task(t);
      for (sim::StreamId st = 0; st < out_.graph.streams().size(); ++st) {
        if (out_.graph.streams()[st].device != out_.stages[s].device || st == out_.stages[s].host) continue;
        if (!out_.graph.stream_tasks(st).empty()) out_.graph.add_dependency(out_.graph.stream_tasks(st).back(), end);
      }
    }
  }
  return std::move(out_);
}

}  // namespace

TrainingGraph build_training_graph(const TrainingPlan& plan, const KernelContext& kernels) {
  // A training step runs kernels back to back: the GPU stays at its power limit (sustained clocks).
  KernelContext sustained{kernels.gpu, kernels.params, kernels.host, kernels.overheads};
  sustained.params.sustained_load = true;
  return Lowering(plan, sustained).run();
}

}  // namespace exasim::workloads
