#include "workloads/training/training_graph.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include "hw/error.hpp"
#include "models/kernel/kernel_models.hpp"
#include "sim/engine.hpp"
#include "workloads/training/pipeline_schedule.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_lowering.hpp"
#include "workloads/training/transformer_ops.hpp"

namespace exasim::workloads {

namespace {

// Kernel time of one op from the tile-level models (models/kernel/kernel_models.hpp). GEMMs run
// in the training precision; attention and memory-bound kernels on 16-bit activations when the
// GEMMs are fp8/fp4 (Transformer Engine keeps activations in bf16).
models::KernelCost cost_of(const Op& op, const KernelContext& k, DType dtype) {
  const DType act = (dtype == DType::kFp8 || dtype == DType::kFp4) ? DType::kBf16 : dtype;
  switch (op.kind) {
    case OpKind::kGemm: {
      if (op.activation_precision) dtype = act;
      if (op.chunks <= 1) return models::gemm_time(k.gpu, k.params, dtype, op.m, op.n, op.k, op.batch);
      models::KernelCost c = models::gemm_time(k.gpu, k.params, dtype, op.m / op.chunks, op.n, op.k, op.batch);
      c.time_s *= op.chunks, c.flops *= op.chunks, c.bytes *= op.chunks;
      return c;
    }
    case OpKind::kAttention:
      return op.backward ? models::attention_backward(k.gpu, k.params, act, op.attention)
                         : models::attention_prefill(k.gpu, k.params, act, op.attention);
    default:
      if (op.memory_op) return models::memory_op(k.gpu, k.params, *op.memory_op, act, op.rows, op.cols);
      if (op.gather) return models::gather_kernel(k.gpu, k.params, op.bytes, op.flops);
      return models::streaming_kernel(k.gpu, k.params, op.bytes, op.flops);
  }
}

}  // namespace

namespace lowering {

std::uint32_t Lowering::comm(sim::CommKind kind, double bytes, std::vector<std::uint32_t> ranks, CommIssuer issuer) {
  auto key = std::make_tuple(static_cast<int>(kind), bytes, ranks, static_cast<int>(issuer));
  if (auto it = comm_index_.find(key); it != comm_index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(out_.comm_ops.size());
  out_.comm_ops.push_back({kind, bytes, std::move(ranks)});
  out_.comm_issuers.push_back(issuer);
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
      // Overlapped TP all-gathers and reduce-scatters run on Transformer Engine's userbuffers.
      const bool userbuffers = plan_.config().tp_comm_overlap && op.group == CommGroup::kTensor &&
                               (op.comm == sim::CommKind::kAllGather || op.comm == sim::CommKind::kReduceScatter);
      c.comm_op = comm(op.comm, op.comm_bytes,
                       op.group == CommGroup::kContext  ? plan_.cp_group(stage)
                       : op.group == CommGroup::kExpert ? plan_.ep_group(stage)
                       : op.group == CommGroup::kExpertTensor ? plan_.etp_group(stage)
                                                        : plan_.tp_group(stage),
                       userbuffers ? CommIssuer::kUserBuffers : CommIssuer::kNccl);
      c.beside = op.group == CommGroup::kContext || op.async;
      c.tensor_group = op.group == CommGroup::kTensor;
      c.feeds_next = userbuffers && op.comm == sim::CommKind::kAllGather && !op.async;
      out.push_back(c);
      continue;
    }
    // A GEMM that userbuffers split into chunks starts a segment: the collective it overlaps
    // starts with it, not with the kernels before it (those after it are short: an activation,
    // RoPE and attention after the QKV GEMM, which its all-gather overlaps as well).
    if (op.own_task || op.chunks > 1) flush();
    const models::KernelCost cost = cost_of(op, k_, plan_.config().precision);
    if (first.empty()) first = op.name;
    last = op.name;
    cur.time += cost.time_s;
    cur.flops += cost.flops;
    cur.bytes += cost.bytes;
    if (op.chunks > 1) cur.pipelined = true;
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
      s.rec.push_back(segments(layer_recompute(dl, plan_.config().recompute_of_layer(l)), "recompute " + tag, stage));
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

// Emits segments in order on the stage's streams, chained after pass.last. With TP
// communication overlap (Megatron-Core/Transformer Engine userbuffers) a reduce-scatter runs
// beside the kernels that produce it, chunk by chunk, and an all-gather beside the GEMM that
// consumes it (ring exchange: the GEMM starts on the local shard); what follows waits for both.
// A collective beside a kernel starts with it: after what the kernel waits for, and after the
// kernel before it on the compute stream.
sim::TaskId Lowering::emit(const std::vector<Segment>& segs, int stage, std::uint16_t category, Pass& pass) {
  const StageStreams& st = out_.stages[stage];
  const bool overlap = plan_.config().tp_comm_overlap;
  sim::TaskId before_compute = sim::kNone;  // what the latest compute segment waited for
  sim::TaskId last_compute = sim::kNone;
  sim::TaskId prev_compute = last_kernel_[stage];  // the kernel before that on the compute stream
  sim::TaskId gather = sim::kNone;  // an overlapped all-gather waiting for its consumer
  sim::TaskId join = sim::kNone;    // an overlapped all-gather the next task waits for (its consumer ran)
  bool after_beside_host = false;  // the previous segment was host work beside the kernels before it
  auto started = [&](sim::TaskId id) {
    if (pass.first == sim::kNone) pass.first = id;
    if (join != sim::kNone) out_.graph.add_dependency(join, id), join = sim::kNone;
  };
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const Segment& s = segs[i];
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
      started(id);
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
    started(id);
    const bool consumer_next = i + 1 < segs.size() && segs[i + 1].pipelined;
    if (s.feeds_next && consumer_next) {
      // Beside its consumer: it waits for what came before; the consumer does not wait for it.
      if (pass.last != sim::kNone) out_.graph.add_dependency(pass.last, id);
      if (gather != sim::kNone) out_.graph.add_dependency(gather, id);  // one ring exchange at a time
      gather = id;
      continue;
    }
    // tp_comm_overlap pipelines only the tensor-parallel collectives with their GEMMs (Transformer
    // Engine's userbuffers); the expert-parallel all-to-alls wait for the kernels that produce their
    // tokens (the permutation, the experts) and the kernels after them wait for the all-to-alls.
    const bool beside =
        ((overlap && s.tensor_group) || s.beside) && s.is_comm && pass.last == last_compute && last_compute != sim::kNone;
    const sim::TaskId after = beside ? before_compute : pass.last;
    if (after != sim::kNone) out_.graph.add_dependency(after, id);
    // Beside a kernel: not before the kernel ahead of it on the stream has run (for an asynchronous
    // collective also its input: that kernel's output).
    if (beside && prev_compute != sim::kNone && prev_compute != after) out_.graph.add_dependency(prev_compute, id);
    if (after_beside_host) out_.graph.add_dependency(last_compute, id);  // the kernels the host work ran beside
    after_beside_host = false;
    if (!s.is_comm) {
      // A kernel after an overlapped collective also waits for the kernels the collective ran beside.
      if (pass.last != sim::kNone && out_.graph.task(pass.last).kind == sim::TaskKind::kCollective && last_compute != sim::kNone)
        out_.graph.add_dependency(last_compute, id);
      before_compute = pass.last;
      prev_compute = last_kernel_[stage];
      last_compute = last_kernel_[stage] = id;
      join = gather, gather = sim::kNone;  // the all-gather beside this kernel: the next task waits for it
    }
    pass.last = id;
  }
  // The consumer ended the segments: the pass ends when its all-gather does too (an empty kernel).
  if (join != sim::kNone) {
    sim::TaskSpec t;
    t.label = "tp all-gather joined";
    t.stream = st.compute;
    t.category = category;
    const sim::TaskId end = out_.graph.add_task(t);
    out_.graph.add_dependency(join, end);
    if (pass.last != sim::kNone) out_.graph.add_dependency(pass.last, end);
    last_kernel_[stage] = end;
    pass.last = end;
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
      // ZeRO-3: reduce-scattered at once (W needs no weights: dW = X^T dY, so nothing is gathered).
      if (const SharedParameters p = sharded_layer_gradients(plan_, first_layer + l); p.total() > 0 && !s.wgt[l].empty())
        reduce_layer_gradients(stage, p, pass);
    }
    last_backward_[stage] = pass.last;
    return pass;
  }
  if (step.forward) {
    // The chunk's first forward waits, layer by layer, for the previous step's weights
    // (overlapped ZeRO-1/2 all-gather); the stage's embedding and head weights are gathered
    // first, with the embedding (or, on a stage without it, before its first layer).
    const bool gathers = overlaps_param_gather() && !weights_gathered_[stage][step.chunk];
    if (gathers) weights_gathered_[stage][step.chunk] = true;
    // (LoRA: the adapters alone; the embedding and the head are frozen, replicated, never gathered.)
    const double outer = gathers && step.chunk == 0 && !plan_.config().lora ? stage_outer_parameters(plan_, stage).dense : 0;
    if (outer > 0) emit_gathered_layer(s.embed_fwd, stage, -1, outer, pass);
    else emit(s.embed_fwd, stage, kForwardTask, pass);
    for (int l = 0; l < static_cast<int>(s.fwd.size()); ++l) {
      if (gathers) emit_gathered_layer(s.fwd[l], stage, first_layer + l, 0, pass);
      else emit_layer(s.fwd[l], stage, first_layer + l, kForwardTask, pass, Shards::kGather);
    }
    emit(s.head_fwd, stage, kForwardTask, pass);
    return pass;
  }
  emit(s.head_bwd, stage, kBackwardTask, pass);
  for (int l = layers - 1; l >= 0; --l) {
    const bool recomputes = !s.rec[l].empty();
    emit_layer(s.rec[l], stage, first_layer + l, kRecomputeTask, pass, Shards::kGather);
    // Split off weight gradients (ZB-H1): the input-gradient pass gathers but reduces nothing.
    const Shards after = recomputes ? (split_weight_ ? Shards::kNone : Shards::kReduce)
                                    : (split_weight_ ? Shards::kGather : Shards::kGatherAndReduce);
    emit_layer(s.bwd[l], stage, first_layer + l, kBackwardTask, pass, after);
    if (!split_weight_) layer_grad_ready_[stage][first_layer + l] = pass.last;
  }
  emit(s.embed_bwd, stage, kBackwardTask, pass);
  last_backward_[stage] = pass.last;
  return pass;
}

// A layer's segments; under ZeRO-3 (FSDP) its weights are all-gathered first, the gather of the
// next layer starting as this one starts (prefetch depth one: two layers' weights gathered at
// most), and a backward reduce-scatters its gradients right away (Rajbhandari et al., SC'20,
// Section 5.3: 3 x Psi per step). A full recompute gathers the weights that its backward then
// uses, as FSDP and DeepSpeed keep them (not a fourth collective per layer). A mixture-of-experts
// layer's routed experts are sharded over their own replicas (the expert-data-parallel group, as
// Megatron-FSDP and torchtitan's FSDP2 with expert parallelism shard them): a second gather and
// reduce-scatter over that group, after the dense one on the same stream.
void Lowering::emit_layer(const std::vector<Segment>& segs, int stage, int layer, std::uint16_t category, Pass& pass,
                          Shards shards) {
  const SharedParameters params = sharded_layer_parameters(plan_, layer);
  const SharedParameters grads = sharded_layer_gradients(plan_, layer);  // all, or LoRA's adapters
  if (shards == Shards::kNone || segs.empty() || params.total() <= 0 || shards == Shards::kReduce) {
    emit(segs, stage, category, pass);
    // Nothing to gather (hybrid sharding over groups of one) may still leave replicas to reduce over.
    if (shards != Shards::kNone && shards != Shards::kGather && !segs.empty()) reduce_layer_gradients(stage, grads, pass);
    return;
  }
  const bool backward = shards == Shards::kGatherAndReduce;
  const std::string pass_name = category == kBackwardTask ? "(bwd)" : "(fwd)";
  sim::TaskId gather = sim::kNone, dense_gather = sim::kNone;
  if (params.dense > 0)
    gather = dense_gather = dp_collective(stage, out_.stages[stage].dp_gather, sim::CommKind::kAllGather, params.dense * 2,
                                          "fsdp gather " + pass_name, Over::kShard);
  if (params.expert > 0) {
    gather = dp_collective(stage, out_.stages[stage].dp_gather, sim::CommKind::kAllGather, params.expert * 2,
                           "fsdp expert gather " + pass_name, Over::kExpertShard);
    if (dense_gather != sim::kNone) out_.graph.add_dependency(dense_gather, gather);
  }
  const sim::TaskId first_gather = dense_gather != sim::kNone ? dense_gather : gather;
  if (offloads_params()) {
    // ZeRO-Infinity (Rajbhandari et al., SC'21): the GPU's shard of the layer lives in host memory
    // (or on the node's NVMe drives, which its GPUs share) and crosses PCIe before the gather; it
    // is prefetched as the gather is.
    sim::TaskSpec t;
    t.label = "params to GPU";
    t.stream = out_.stages[stage].param_fetch;
    // What it computes with and does not hold: its shard of what is sharded, the whole of what is
    // not (routed experts with a single replica).
    SharedParameters held = layer_parameters(plan_, layer);
    if (plan_.config().lora) held.dense += layer_trainable_parameters(plan_, layer).dense;  // the adapters beside them
    t.bytes = 2 * (held.dense / plan_.shard_size() + held.expert / plan_.expert_shard_size());
    t.duration = t.bytes / param_fetch_rate();
    t.category = kOffloadTask;
    const sim::TaskId fetch = out_.graph.add_task(t);
    if (gather_gate_[stage] != sim::kNone) out_.graph.add_dependency(gather_gate_[stage], fetch);
    out_.graph.add_dependency(fetch, first_gather);
  }
  if (gather_gate_[stage] != sim::kNone) out_.graph.add_dependency(gather_gate_[stage], first_gather);
  const sim::TaskId before_layer = pass.last;
  Pass part{sim::kNone, pass.last};  // chained after the pass so far; `first` is the layer's first task
  emit(segs, stage, category, part);
  if (pass.first == sim::kNone) pass.first = part.first;
  pass.last = part.last;
  out_.graph.add_dependency(gather, part.first);
  // The next gather may start as this layer starts: once the layer before it has freed its weights.
  if (before_layer != sim::kNone) gather_gate_[stage] = before_layer;
  if (backward) reduce_layer_gradients(stage, grads, pass);
}

// Megatron-Core's --overlap-param-gather: the distributed optimizer's all-gather of the updated
// weights runs bucket (here: layer) by bucket during the next iteration's first forward pass, each
// layer waiting for its own; the later micro-batches find the weights in place. Every stage queues
// its gathers at the start of the step (Megatron-Core's --align-param-gather; with one bucket of
// lookahead instead, each pipeline stage would start gathering only when its first micro-batch
// arrives, and every stage of a gather-bound pipeline would add its wait to the warm-up). Folded
// into this iteration (steady state: the previous step's gathers are this step's), so they start
// at time zero, in layer order on the stage's gather stream.
void Lowering::emit_gathered_layer(const std::vector<Segment>& segs, int stage, int layer, double extra, Pass& pass) {
  const SharedParameters p = layer >= 0 ? layer_trainable_parameters(plan_, layer) : SharedParameters{};  // what the optimizer updated
  const double dense = p.dense + extra;
  std::vector<sim::TaskId> gathers;
  if (plan_.shard_size() > 1 && dense > 0)
    gathers.push_back(dp_collective(stage, out_.stages[stage].dp_gather, sim::CommKind::kAllGather, dense * 2,
                                    "dp weights all-gather (next forward)", Over::kShard));
  if (plan_.expert_shard_size() > 1 && p.expert > 0)
    gathers.push_back(dp_collective(stage, out_.stages[stage].dp_gather, sim::CommKind::kAllGather, p.expert * 2,
                                    "expert weights all-gather (next forward)", Over::kExpertShard));
  Pass part{sim::kNone, pass.last};
  emit(segs, stage, kForwardTask, part);
  if (part.first == sim::kNone) {  // nothing to run (an empty embedding segment): the next layer waits instead
    for (sim::TaskId g : gathers) pending_gathers_[stage].push_back(g);
    return;
  }
  for (sim::TaskId g : gathers) out_.graph.add_dependency(g, part.first);
  for (sim::TaskId g : pending_gathers_[stage]) out_.graph.add_dependency(g, part.first);
  pending_gathers_[stage].clear();
  if (pass.first == sim::kNone) pass.first = part.first;
  pass.last = part.last;
}

void Lowering::reduce_layer_gradients(int stage, const SharedParameters& params, const Pass& pass) {
  if (params.dense > 0) {
    const sim::TaskId done = reduce_gradients(stage, params.dense, pass.last, "fsdp reduce-scatter grads");
    if (done != sim::kNone) {
      sharded_reductions_[stage].push_back(done);
      sharded_owned_[stage].push_back(params.dense / plan_.shard_size());
    }
  }
  if (params.expert > 0) {  // 16-bit expert gradients over the experts' replicas
    const sim::TaskId done = reduce_gradients(stage, params.expert, pass.last, "fsdp expert reduce-scatter grads", true);
    if (done != sim::kNone) {
      sharded_reductions_[stage].push_back(done);
      sharded_owned_[stage].push_back(params.expert / plan_.expert_shard_size());
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
  if (plan_.config().zero >= 3 || overlaps_param_gather()) st.dp_gather = out_.graph.add_stream(st.device, sim::StreamKind::kComm, name + "/dp-gather");
  if (plan_.config().offload != "none")
    st.offload = out_.graph.add_stream(st.device, sim::StreamKind::kComm, name + "/offload");
  if (offloads_params()) st.param_fetch = out_.graph.add_stream(st.device, sim::StreamKind::kCopy, name + "/param-fetch");
  if (has_host_work()) st.host = out_.graph.add_stream(st.device, sim::StreamKind::kCopy, name + "/host");
  out_.stages.push_back(st);
}

TrainingGraph Lowering::run() {
  const int pp = plan_.par().pp;
  const ScheduleInfo* schedule = find_pipeline_schedule(plan_.config().pipeline_schedule);
  if (!schedule) {
    throw PlanError("pipeline schedule \"" + plan_.config().pipeline_schedule + "\" is not simulated yet",
                    {"", 0, "training.pipeline_schedule"}, "use gpipe, 1f1b, interleaved, zero-bubble, zero-bubble-h2 or breadth-first");
  }
  split_weight_ = schedule->splits_weight_grad;
  layer_grad_ready_.assign(pp, {});
  last_backward_.assign(pp, sim::kNone);
  gather_gate_.assign(pp, sim::kNone);
  last_kernel_.assign(pp, sim::kNone);
  weights_gathered_.assign(pp, std::vector<bool>(plan_.chunks(), false));
  pending_gathers_.assign(pp, {});
  sharded_reductions_.assign(pp, {});
  sharded_owned_.assign(pp, {});
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
        if (out_.graph.stream_last(st) != sim::kNone) out_.graph.add_dependency(out_.graph.stream_last(st), end);
      }
    }
  }
  return std::move(out_);
}

}  // namespace lowering

namespace {

// A training step runs kernels back to back: the GPU stays at its power limit (sustained clocks).
KernelContext sustained(const KernelContext& kernels) {
  KernelContext k{kernels.gpu, kernels.params, kernels.host, kernels.overheads};
  k.params.sustained_load = true;
  return k;
}

}  // namespace

TrainingGraph build_training_graph(const TrainingPlan& plan, const KernelContext& kernels) {
  return lowering::Lowering(plan, sustained(kernels)).run();
}

double weight_gradient_time(const TrainingPlan& plan, const KernelContext& kernels, int layer) {
  const KernelContext k = sustained(kernels);
  const LayerDims d = LayerDims::from(plan.model(), plan.config()).for_layer(plan.model(), layer);
  double t = 0;
  for (const Op& op : layer_backward(d))
    if (op.weight_grad) t += cost_of(op, k, plan.config().precision).time_s;
  return t;
}

double comm_compute_share(const hw::GpuSpec& gpu, double sms) {
  return gpu.sm_count > 0 ? std::min(sms / gpu.sm_count, sim::Engine::kMaxCommComputeShare) : 0.0;
}

std::vector<double> comm_compute_shares(const TrainingGraph& tg, const hw::GpuSpec& gpu,
                                        const models::CollectiveParams& collective) {
  std::vector<double> share(tg.comm_ops.size(), 0.0);
  if (gpu.sm_count <= 0) return share;
  for (std::size_t i = 0; i < share.size(); ++i) {
    const sim::CommKind kind = tg.comm_ops[i].kind;
    const bool userbuffers = tg.comm_issuers[i] == CommIssuer::kUserBuffers;
    const double sms = kind == sim::CommKind::kSendRecv ? collective.p2p_sms
                       : !userbuffers                   ? collective.collective_sms
                       : kind == sim::CommKind::kAllGather ? collective.userbuffers_all_gather_sms
                                                           : collective.userbuffers_reduce_scatter_sms;
    share[i] = comm_compute_share(gpu, sms);
  }
  return share;
}

}  // namespace exasim::workloads
