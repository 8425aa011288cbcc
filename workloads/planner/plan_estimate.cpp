#include "workloads/planner/plan_estimate.hpp"

#include <algorithm>

#include "models/cost/cost_model.hpp"
#include "models/kernel/roofline.hpp"
#include "models/memory/activation_memory.hpp"
#include "models/power/cluster_power.hpp"
#include "models/power/dvfs.hpp"
#include "sim/engine.hpp"
#include "workloads/training/pipeline_schedule.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/model_flops.hpp"
#include "workloads/training/offload_costs.hpp"

namespace exasim::workloads::planner {

namespace {

// One stage's share of an iteration.
struct StageLoad {
  int stage = 0;
  double copies = 1;                // stages it stands for (a middle stage stands for all middles)
  int layers = 0;
  double fwd = 0, bwd = 0;          // per micro-batch, s
  double wgt = 0;                   // of bwd, the weight-gradient GEMMs (zero-bubble's W pass)
  double params = 0;                // dense, held before ZeRO sharding
  double expert_params = 0;         // routed experts (MoE), held before ZeRO sharding
  double outer_params = 0;          // embedding / head
  double trainable = 0;             // with gradients and optimizer states (LoRA: the adapters only)
  PassCost work;                    // per iteration: compute time, flops, bytes
};

void add_scaled(PassCost& to, const PassCost& p, double k) {
  to.compute += k * p.compute;
  to.flops += k * p.flops;
  to.hbm_bytes += k * p.hbm_bytes;
  to.link_bytes += k * p.link_bytes;
}

// What every step of one candidate's estimate reads.
struct Ctx {
  const ModelNumbers& n;
  const Candidate& c;
  const LayerCost& lc;
  int m = 0;                 // micro-batches per replica
  double f = 0, b = 0;       // per layer and micro-batch, waits for ZeRO-3 gathers included
  double w = 0;              // of b, the weight-gradient GEMMs
  double layer_bytes = 0;    // 16-bit dense weights (or gradients) of one layer on one GPU
  double expert_bytes = 0;   // 16-bit routed-expert weights of one layer on one GPU (MoE)
  int edp = 1;               // GPUs holding the same experts (their gradients are reduced over these)
  int shard = 1, expert_shard = 1;  // the replicas the dense and the expert states are sharded over (hybrid: fewer)
  double lora_layer_params = -1;  // with LoRA: the adapters' parameters per layer and GPU (all that trains)
  double grad_layer_bytes() const { return lora_layer_params < 0 ? layer_bytes : 2 * lora_layer_params; }
};

// First, a middle (standing for all middles) and last stage.
std::vector<StageLoad> stage_loads(const Ctx& x) {
  const int pp = x.c.pp;
  std::vector<int> stages = {0};
  if (pp > 2) stages.push_back(1);
  if (pp > 1) stages.push_back(pp - 1);
  std::vector<StageLoad> out;
  for (const int s : stages) {
    StageLoad l;
    l.stage = s;
    l.copies = s == 1 && pp > 2 ? pp - 2 : 1;
    const StageWeights sw = stage_weights(x.n, x.c, s, x.shard);
    l.layers = sw.layers;
    l.fwd = l.layers * x.f;
    l.bwd = l.layers * x.b;
    l.wgt = l.layers * x.w;
    add_scaled(l.work, x.lc.layer_fwd, double(x.m) * l.layers);
    add_scaled(l.work, x.lc.layer_bwd, double(x.m) * l.layers);
    auto end_piece = [&](const PassCost& fwd, const PassCost& bwd, double params) {
      l.fwd += fwd.time;
      l.bwd += bwd.time;
      l.wgt += bwd.time / 2;  // the LM head's and embedding's GEMMs: as many weight as input gradients
      l.outer_params += params / x.c.tp;
      add_scaled(l.work, fwd, x.m);
      add_scaled(l.work, bwd, x.m);
    };
    if (s == 0) end_piece(x.lc.embed_fwd, x.lc.embed_bwd, x.n.embed_params);
    if (s == pp - 1) end_piece(x.lc.head_fwd, x.lc.head_bwd, x.n.head_params + (pp > 1 ? x.n.tied_copy_params : 0));
    l.params = sw.dense + l.outer_params;
    l.expert_params = sw.experts;
    l.trainable = x.lora_layer_params < 0 ? l.params : l.layers * x.lora_layer_params;  // LoRA: embedding, head frozen
    out.push_back(l);
  }
  return out;
}

// Time until stage 0 finishes its last backward; fills compute and bubble.
double pipeline_time(const Ctx& x, const std::vector<StageLoad>& loads, double send, Estimate& e) {
  double max_fb = 0, sum_fb = 0, sum_f = 0, sum_w = 0, passes = 0;
  for (const StageLoad& l : loads) {
    max_fb = std::max(max_fb, l.fwd + l.bwd);
    sum_fb += (l.fwd + l.bwd) * l.copies;
    sum_f += l.fwd * l.copies;
    sum_w += l.wgt * l.copies;
    passes += l.copies;
  }
  // Interleaving shrinks the bubble by v: each fill and drain step is one chunk of 1/v the layers.
  double bubble = (sum_fb - max_fb) / x.c.vpp;
  // Zero-bubble schedules (Qi et al., ICLR'24) split the backward into the input-gradient pass B
  // and the weight-gradient pass W (bwd = B + W): 1F1B idles (p - 1)(F + B + W), ZB-H1
  // (p - 1)(F + B - W) once every rank defers a W (m >= p; with fewer micro-batches only the
  // backward cascade speeds up, to F + B per stage), ZB-H2 (p - 1)(F + B - 2W) and one W more per
  // micro-batch short of the 2p - 1 that fill the drain (pipeline_bubble_test).
  const ScheduleInfo& schedule = pipeline_schedules()[x.c.schedule];
  if (schedule.splits_weight_grad && sum_fb > 0) {
    const double sum_b = sum_fb - sum_f - sum_w;
    if (schedule.steady_state_period) {
      bubble = bubble * std::max(0.0, sum_f + sum_b - 2 * sum_w) / sum_fb + std::max(0, 2 * x.c.pp - 1 - x.m) * sum_w / passes;
    } else {
      bubble *= (x.m >= x.c.pp ? sum_f + sum_b - sum_w : sum_f + sum_b) / sum_fb;
    }
  }
  e.compute_s = x.m * max_fb;
  e.bubble_s = bubble;
  return x.m * max_fb + bubble + 2 * (x.c.pp - 1) * send;
}

// A collective over `replicas` ranks `stride` apart as TrainingPlan runs it with hybrid sharding:
// over the first `shard` of them, and for a reduction then the shard all-reduced across the copies.
double replica_collective(CommTimes& comm, sim::CommKind kind, int stride, int replicas, int shard, double bytes) {
  if (replicas <= 1 || bytes <= 0) return 0;
  if (shard >= replicas) return comm.data_parallel(kind, stride, replicas, bytes);
  double t = shard > 1 ? comm.data_parallel(kind, stride, shard, bytes) : 0;
  if (kind != sim::CommKind::kAllGather)
    t += comm.data_parallel(sim::CommKind::kAllReduce, stride * shard, replicas / shard, bytes / shard);
  return t;
}

// One layer's collective over its dense weights' replicas (dp x cp ranks tp apart) and, for a
// mixture of experts, over its experts' replicas (tp x cp x dp / (ep etp) ranks ep etp apart), one after
// the other on the stage's data-parallel stream.
double layer_collective(const Ctx& x, CommTimes& comm, sim::CommKind kind, double dense_bytes) {
  double t = replica_collective(comm, kind, x.c.tp, weight_replicas(x.c), x.shard, dense_bytes);  // dp x cp ranks tp apart
  if (x.expert_bytes > 0) t += replica_collective(comm, kind, x.c.ep * x.c.etp, x.edp, x.expert_shard, x.expert_bytes);
  return t;
}

// Gradient reduction after the stage's last backward that its compute does not hide.
double exposed_gradient_sync(const Ctx& x, CommTimes& comm, const StageLoad& l, bool overlap) {
  const auto kind = x.c.zero >= 1 ? sim::CommKind::kReduceScatter : sim::CommKind::kAllReduce;
  double exposed = 0;
  const double bucket = layer_collective(x, comm, x.c.zero >= 3 ? sim::CommKind::kReduceScatter : kind, x.grad_layer_bytes());
  if (x.c.zero >= 3) {  // per-micro-batch reduce-scatters beside the backward passes
    exposed = std::max(0.0, double(x.m) * l.layers * bucket - x.m * l.bwd);
  } else {  // one bucket per layer, ready as the last backward passes it
    const double all = l.layers * bucket;
    // Zero-bubble schedules run the last micro-batch's weight-gradient passes at the very end, and
    // a layer's gradients are final only after its pass: the buckets then hide behind those
    // passes alone rather than the whole backward.
    const double hiding = pipeline_schedules()[x.c.schedule].splits_weight_grad ? x.w : x.b;
    exposed = overlap ? std::max(bucket, all - (l.layers - 1) * hiding) : all;
  }
  return exposed + replica_collective(comm, kind, x.c.tp, weight_replicas(x.c), x.shard, x.lora_layer_params < 0 ? l.outer_params * 2 : 0.0);
}

}  // namespace

Estimator::Estimator(const PlannerInputs& in)
    : in_(in),
      numbers_(ModelNumbers::of(in.model)),
      layers_(in.model, in.base, in.cluster, in.calibration.kernel, in.calibration.collective, in.network),
      comm_(in.cluster, in.calibration.collective) {}

namespace {

// Block recompute: the widest model chunk's layers, and the share of all layers recomputed.
int widest_chunk(const Candidate& c, int layers) {
  int widest = 0;
  for (int v = 0; v < c.pp * c.vpp; ++v) widest = std::max(widest, virtual_stage_layers(c, layers, v));
  return widest;
}
double recomputed_share(const Candidate& c, int layers) {
  int recomputed = 0;
  for (int v = 0; v < c.pp * c.vpp; ++v) recomputed += std::min(c.recompute_layers, virtual_stage_layers(c, layers, v));
  return double(recomputed) / layers;
}

}  // namespace

int Estimator::fewest_recompute_layers(Candidate c, double margin) {
  const double usable = in_.cluster.gpu.hbm_capacity_bytes * (1 - margin);
  const int widest = widest_chunk(c, numbers_.layers);
  c.recompute_layers = 0;
  c.recompute = models::Recompute::kNone;
  if (memory(c).peak_bytes <= usable) return 0;
  // Memory falls as N grows (a recomputed layer keeps only its input): bisect for the fewest N
  // below the chunk's width that fits; none (0) when only every layer does.
  c.recompute = models::Recompute::kFull;
  int lo = 1, hi = widest;  // hi: fits (every layer recomputed) or the sentinel "none below widest"
  while (lo < hi) {
    c.recompute_layers = (lo + hi) / 2;
    if (memory(c).peak_bytes <= usable) hi = c.recompute_layers;
    else lo = c.recompute_layers + 1;
  }
  return lo < widest ? lo : 0;
}

double Estimator::policy_activation_bytes(const Candidate& c, models::Recompute policy) {
  const auto key = std::make_tuple(c.tp, c.sequence_parallel, c.micro_batch, static_cast<int>(policy), c.cp);
  if (auto it = activations_.find(key); it != activations_.end()) return it->second;
  TrainingConfig config = in_.base;  // the candidate's knobs on the scenario's training settings
  config.micro_batch = c.micro_batch;
  config.parallelism.tp = c.tp;
  config.parallelism.sequence_parallel = c.sequence_parallel;
  config.parallelism.cp = c.cp;
  config.recompute = policy;
  const double bytes = layer_activation_bytes(in_.model, config);
  activations_.emplace(key, bytes);
  return bytes;
}

MemoryEstimate Estimator::memory(const Candidate& c) {
  if (c.recompute_layers > 0)  // block recompute: the chunk's first layers recomputed, the others kept
    return estimate_memory(numbers_, in_.base, c, policy_activation_bytes(c, models::Recompute::kFull),
                           policy_activation_bytes(c, models::Recompute::kNone));
  return estimate_memory(numbers_, in_.base, c, policy_activation_bytes(c, c.recompute));
}

Estimate Estimator::estimate(const Candidate& c) {
  const hw::GpuSpec& gpu = in_.cluster.gpu;
  LayerCost lc = layers_.get(c.tp, c.sequence_parallel, c.micro_batch, c.recompute, c.ep, c.cp, c.etp);
  if (c.recompute_layers > 0) {  // block recompute: a recomputed layer's backward on that share of the layers
    const LayerCost& kept = layers_.get(c.tp, c.sequence_parallel, c.micro_batch, models::Recompute::kNone, c.ep, c.cp, c.etp);
    lc.layer_bwd = kept.layer_bwd.mixed_with(lc.layer_bwd, recomputed_share(c, numbers_.layers));
  }
  Ctx x{numbers_, c, lc};
  x.m = in_.base.global_batch / c.dp / c.micro_batch;
  x.layer_bytes = numbers_.dense_per_gpu(c.tp) * 2;
  x.expert_bytes = numbers_.experts_per_gpu(c.ep, c.etp) * 2;
  x.edp = expert_replicas(c);
  x.shard = shard_size(c, in_.base.shard_group);
  x.expert_shard = expert_shard_size(c, in_.base.shard_group);
  if (in_.base.lora) x.lora_layer_params = lora_layer_parameters(in_.model, *in_.base.lora, c.tp);
  // ZeRO-3: a layer waits for its weight gather when the gather outlasts the previous layer.
  const double gather = c.zero >= 3 ? layer_collective(x, comm_, sim::CommKind::kAllGather, x.layer_bytes) : 0;
  // ZeRO-Infinity: the GPU's shard of each layer crosses PCIe (or comes off NVMe) before its
  // gather, prefetched as the gather is.
  const std::string& offload = offload_modes()[c.offload];
  const topologies::HostSide* host = in_.cluster.host ? &*in_.cluster.host : nullptr;
  const double fetch =
      c.offload >= 2 && host ? (x.layer_bytes / x.shard + x.expert_bytes / x.expert_shard) / param_fetch_rate(*host, offload) : 0;
  double fwd = lc.layer_fwd.time, bwd = lc.layer_bwd.time;
  if (c.zero >= 3) {
    // A layer's compute shares its SMs with the collectives beside it (NCCL's channels): the next
    // layer's gather, and in a backward also this layer's reduce-scatter.
    const double share = comm_compute_share(gpu, in_.calibration.collective.collective_sms);
    const double rs = layer_collective(x, comm_, sim::CommKind::kReduceScatter, x.grad_layer_bytes());
    if (fwd > 0) fwd /= 1 - share * std::min(1.0, gather / fwd);
    if (bwd > 0) bwd /= 1 - std::min(sim::Engine::kMaxCommComputeShare, share * (std::min(1.0, gather / bwd) + std::min(1.0, rs / bwd)));
  }
  x.f = std::max({fwd, gather, fetch});
  x.b = std::max({bwd, gather, fetch});
  x.w = std::min(lc.layer_wgt, x.b);
  const std::vector<StageLoad> loads = stage_loads(x);
  const int pp = c.pp;
  const double send =
      pp > 1 ? comm_.pipeline_send(c.tp, weight_replicas(c), double(in_.base.seq_len) / c.cp * c.micro_batch * numbers_.hidden * 2 / c.tp) : 0;
  Estimate e;
  const double pipe = pipeline_time(x, loads, send, e);
  // Stage s finishes its last backward this long before stage 0 does.
  const double b_first = loads[0].bwd / c.vpp, b_mid = pp > 2 ? loads[1].bwd / c.vpp : 0;
  auto lag = [&](int s) { return s == 0 ? 0.0 : b_first + (s - 1) * b_mid + s * send; };
  // ZeRO-1/2 weight all-gather: after the optimizer step, or (overlap_param_gather) layer by layer
  // during the first forward, where stage 0's first micro-batch waits for what the gathers
  // outlast of its layers and every later pass is shifted by that: layer i of L starts at
  // max(end of layer i-1, i g), so the forward ends max(g, L (g - f) + f) later than L f.
  auto gather_all = [&](const StageLoad& l) {
    if (c.zero != 1 && c.zero != 2) return 0.0;
    return replica_collective(comm_, sim::CommKind::kAllGather, c.tp, weight_replicas(c), x.shard, l.trainable * 2) +
           replica_collective(comm_, sim::CommKind::kAllGather, c.ep * c.etp, x.edp, x.expert_shard, l.expert_params * 2);
  };
  double first_forward_delay = 0;
  if (in_.base.overlap_param_gather && !loads.empty() && loads[0].layers > 0) {
    const double L = loads[0].layers, g = gather_all(loads[0]) / L, f = loads[0].fwd / L;
    if (g > 0) first_forward_delay = std::max(g, L * (g - f) + f);
  }
  double end_max = 0, copies = 0;
  PassCost work;  // of a mean GPU, for power
  for (const StageLoad& l : loads) {
    const double exposed = exposed_gradient_sync(x, comm_, l, in_.base.overlap_grad_reduce);
    const double owned = l.trainable / (c.zero >= 1 ? x.shard : 1) + l.expert_params / (c.zero >= 1 ? x.expert_shard : 1);
    models::KernelCost opt = models::memory_bound(gpu, in_.calibration.kernel, 30 * owned, 12 * owned);
    // ZeRO-Offload: each layer's owned gradients go to the host as its reduction ends (one copy
    // stream, behind the backward like the reductions), the host steps once the norm is known,
    // and the new 16-bit weights come back (ZeRO-Infinity keeps them there for the fetches).
    double offloaded = 0;
    if (c.offload > 0 && host) {
      const double rate = host_copy_rate(*host), to_host = 2 * owned / rate, per_layer = to_host / std::max(1, l.layers);
      offloaded = std::max(per_layer, to_host - (l.layers - 1) * x.b) + (c.offload == 1 ? to_host : 0.0);
      opt = {};
      opt.time_s = host_optimizer_time(*host, offload, owned);
    }
    const double param_gather = in_.base.overlap_param_gather ? first_forward_delay : gather_all(l);
    const double end = pipe - lag(l.stage) + exposed + offloaded + opt.time_s + param_gather;
    if (end > end_max) {
      end_max = end;
      e.exposed_comm_s = exposed + offloaded + param_gather + 2 * (pp - 1) * send;  // offload copies included
      e.optimizer_s = opt.time_s;
    }
    PassCost w = l.work;
    const double reduced = (weight_replicas(c) > 1 ? l.params : 0) + (x.edp > 1 ? l.expert_params : 0);
    add_scaled(w, {0, c.offload > 0 ? 0.0 : opt.time_s, opt.flops, opt.bytes, 4 * reduced}, 1);  // + reduction and gather: ~2x 16-bit state
    add_scaled(work, w, l.copies);
    copies += l.copies;
  }
  work.compute /= copies, work.flops /= copies, work.hbm_bytes /= copies, work.link_bytes /= copies;
  e.iteration_time_s = end_max;
  finish(e, work, c);
  return e;
}

void Estimator::finish(Estimate& e, const PassCost& work, const Candidate& c) {
  const hw::GpuSpec& gpu = in_.cluster.gpu;
  // Power: average activity of a GPU over the iteration; a cap slows the busy periods.
  const double T = e.iteration_time_s;
  const double busy = work.compute;
  models::UnitActivity a;
  a.matrix = work.flops / (gpu.peak(in_.base.precision) * T);
  a.vector = busy / T;
  a.hbm = work.hbm_bytes / (gpu.hbm_bandwidth * T);
  a.link = gpu.scaleup_bandwidth > 0 ? work.link_bytes / (gpu.scaleup_bandwidth * T) : 0;
  // Busy periods run at the clock the power limit (cap, or TDP) allows; links are held in reserve.
  double t_capped = T, busy_dynamic = 0;
  const double limit = in_.power.gpu_cap_w > 0 ? std::min(in_.power.gpu_cap_w, gpu.tdp_w) : gpu.tdp_w;
  const double link_w = models::power_split(gpu).link_w;
  if (a.vector > 0) {
    const models::UnitActivity during{a.matrix / a.vector, 1, a.hbm / a.vector, 0};
    const double bound = during.matrix / std::max(1e-12, during.matrix + during.hbm);
    const auto k = models::limit_kernel(gpu, {during, bound}, limit, link_w, in_.power.dvfs);
    t_capped = T + busy * (k.time_factor - 1);
    busy_dynamic = (k.power_w - gpu.idle_power_w) * busy * k.time_factor / t_capped;
    e.clock = k.clock.frequency;
  }
  e.iteration_time_s = t_capped;
  const double tokens = double(in_.base.global_batch) * in_.base.seq_len;
  e.tokens_per_s = tokens / t_capped;
  TrainingConfig cfg = in_.base;
  cfg.micro_batch = c.micro_batch;
  const double model_flops = step_flops_per_forward(cfg) * model_forward_flops(in_.model, cfg) * (in_.base.global_batch / c.micro_batch);
  e.mfu = model_flops / t_capped / in_.cluster.gpu_count() / gpu.peak(in_.base.precision);
  e.memory = memory(c);
  e.memory_capacity_bytes = gpu.hbm_capacity_bytes;
  e.gpu_power_w = gpu.idle_power_w + busy_dynamic + link_w * std::min(1.0, a.link) * T / t_capped;
  const auto power = models::cluster_power({in_.cluster.gpu_count(), in_.cluster.nodes, e.gpu_power_w,
                                            in_.cluster.node_power_other_w, in_.switch_port_gbps, in_.cost.pue});
  e.it_power_w = power.it_w;
  e.energy_per_token_j = power.it_w * t_capped / tokens;
  const auto cost = models::running_cost(in_.cost, in_.cluster.gpu_count(), power.it_w, e.tokens_per_s);
  e.usd_per_hour = cost.usd_per_hour;
  e.usd_per_million_tokens = cost.usd_per_million_tokens;
}

}  // namespace exasim::workloads::planner
