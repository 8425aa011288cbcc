#include "workloads/planner/layer_costs.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "models/collective/collective.hpp"
#include "sim/engine.hpp"
#include "sim/net/collective_plan.hpp"
#include "sim/net/network_registry.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_plan.hpp"

namespace exasim::workloads::planner {

PassCost& PassCost::operator-=(const PassCost& o) {
  time -= o.time;
  compute -= o.compute;
  flops -= o.flops;
  hbm_bytes -= o.hbm_bytes;
  link_bytes -= o.link_bytes;
  return *this;
}

PassCost& PassCost::operator+=(const PassCost& o) {
  time += o.time;
  compute += o.compute;
  flops += o.flops;
  hbm_bytes += o.hbm_bytes;
  link_bytes += o.link_bytes;
  return *this;
}

PassCost PassCost::scaled(double w) const {
  PassCost r;
  r.time = w * time;
  r.compute = w * compute;
  r.flops = w * flops;
  r.hbm_bytes = w * hbm_bytes;
  r.link_bytes = w * link_bytes;
  return r;
}

PassCost PassCost::mixed_with(const PassCost& o, double w) const {
  PassCost r = scaled(1 - w);
  r += o.scaled(w);
  return r;
}

namespace {

struct StagePasses {
  PassCost fwd, bwd;
};

bool is_backward(std::uint16_t category) { return category == kBackwardTask || category == kRecomputeTask; }

// Forward and backward of each stage of a one-micro-batch run: its compute and TP streams only.
std::vector<StagePasses> stage_passes(const TrainingGraph& tg, const sim::Timeline& tl) {
  std::vector<StagePasses> out;
  for (const StageStreams& st : tg.stages) {
    double bwd_start = std::numeric_limits<double>::infinity();
    for (sim::TaskId id : tg.graph.stream_tasks(st.compute))
      if (is_backward(tg.graph.task(id).category)) bwd_start = std::min(bwd_start, tl[id].start);
    struct Span {
      double begin = std::numeric_limits<double>::infinity(), end = 0;
    } f, b;
    StagePasses p;
    auto add = [&](sim::TaskId id) {
      const sim::Task& t = tg.graph.task(id);
      if (t.category == kOptimizerTask) return;  // once per iteration, not per pass
      const bool backward = tl[id].start >= bwd_start;
      Span& span = backward ? b : f;
      PassCost& pass = backward ? p.bwd : p.fwd;
      span.begin = std::min(span.begin, tl[id].start);
      span.end = std::max(span.end, tl[id].end);
      if (t.kind == sim::TaskKind::kCompute) {
        pass.compute += t.duration;
        pass.flops += t.flops;
        pass.hbm_bytes += t.bytes;
      } else {
        const sim::CommOp& op = tg.comm_ops[t.comm_op];
        pass.link_bytes += op.bytes * models::bus_factor(sim::to_collective(op.kind), static_cast<int>(op.ranks.size()));
      }
    };
    for (sim::TaskId id : tg.graph.stream_tasks(st.compute)) add(id);
    for (sim::TaskId id : tg.graph.stream_tasks(st.tp_comm)) add(id);
    p.fwd.time = f.end > f.begin ? f.end - f.begin : 0;
    p.bwd.time = b.end > b.begin ? b.end - b.begin : 0;
    out.push_back(p);
  }
  return out;
}

}  // namespace

LayerCostTable::LayerCostTable(const ModelSpec& model, const TrainingConfig& base, const topologies::Cluster& cluster,
                               const models::KernelParams& kernel, const models::CollectiveParams& collective,
                               const sim::NetworkOptions& network)
    : model_(model), base_(base), cluster_(cluster), kernel_(kernel), collective_(collective), network_(network) {
  network_.symmetric_copies = true;
}

// The measuring runs use two stages of tp (x the EP replicas) GPUs; building the whole cluster's
// topology for each would dominate the search. Nodes are identical, so the first few stand for
// all of them, joined by one switch (TP groups normally sit inside a node; the network matters
// only when they, or an expert-parallel group, do not).
topologies::Cluster LayerCostTable::small_cluster(int gpus_per_stage) const {
  topologies::Cluster c = cluster_;
  c.nodes = std::min(cluster_.nodes, std::max(2, (2 * gpus_per_stage + c.gpus_per_node - 1) / c.gpus_per_node));
  if (c.inter) {
    topologies::InterNode net;
    net.topology = "single-switch";
    net.nic = c.inter->nic;
    net.nics_per_node = c.inter->nics_per_node;
    net.gpu_nic_bandwidth = c.inter->gpu_nic_bandwidth;
    c.inter = net;
  }
  if (c.nodes == 1) c.inter.reset();
  return c;
}

const LayerCost& LayerCostTable::get(int tp, bool sp, int micro_batch, models::Recompute recompute, int ep, int cp,
                                     int etp) {
  const auto key = std::make_tuple(tp, sp, micro_batch, static_cast<int>(recompute), ep, cp, etp);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  return cache_.emplace(key, measure(tp, sp, micro_batch, recompute, ep, cp, etp)).first->second;
}

// A model whose layers differ (sliding-window layers beside full ones; a mixture of experts'
// leading dense layers) is measured once per kind of layer, as if every layer were of that kind,
// and its layer cost is the mean weighted by the layers of each kind (the measuring runs hold
// one or two layers, which would otherwise stand for all).
LayerCost LayerCostTable::measure(int tp, bool sp, int micro_batch, models::Recompute recompute, int ep, int cp,
                                  int etp) {
  std::vector<std::pair<ModelSpec, double>> kinds = {{model_, 1.0}};
  auto split = [&kinds](int count, int layers, auto&& first_kind, auto&& second_kind) {
    if (count == 0 || count == layers) return;
    std::vector<std::pair<ModelSpec, double>> out;
    const double w = static_cast<double>(count) / layers;
    for (auto& [m, weight] : kinds) {
      ModelSpec a = m, b = m;
      first_kind(a);
      second_kind(b);
      out.emplace_back(a, weight * (1 - w));
      out.emplace_back(b, weight * w);
    }
    kinds = std::move(out);
  };
  split(model_.sliding_layers(), model_.layers,
        [](ModelSpec& m) { m.sliding_window = 0, m.sliding_window_pattern = 0; },
        [](ModelSpec& m) { m.sliding_window_pattern = 0; });
  if (model_.moe)
    split(std::min(model_.moe->dense_layers, model_.layers), model_.layers,
          [](ModelSpec& m) { m.moe->dense_layers = 0; }, [](ModelSpec& m) { m.moe.reset(); });
  LayerCost c;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const auto& [m, w] = kinds[i];
    const LayerCost k = measure_model(m, tp, sp, micro_batch, recompute, m.moe ? ep : 1, cp, m.moe ? etp : 1);
    if (i == 0) c = k, c.layer_fwd = PassCost{}, c.layer_bwd = PassCost{}, c.layer_wgt = 0;  // the ends of the first kind
    c.layer_fwd += k.layer_fwd.scaled(w);
    c.layer_bwd += k.layer_bwd.scaled(w);
    c.layer_wgt += w * k.layer_wgt;
  }
  return c;
}

LayerCost LayerCostTable::measure_model(const ModelSpec& model, int tp, bool sp, int micro_batch,
                                        models::Recompute recompute, int ep, int cp, int etp) {
  // Each stage: tp x cp GPUs times the data-parallel replicas an ep-wide expert group needs. Two
  // stages when the cluster has room for a second, else one (the group spans every GPU, so pp
  // is 1 anyway and the embedding's cost may sit with the head).
  const int replicas = ep * etp / std::gcd(ep * etp, tp * cp);
  const int per_stage = tp * cp * replicas;
  const topologies::Cluster small = small_cluster(per_stage);
  const int pp = 2 * per_stage <= small.gpu_count() ? 2 : 1;
  TrainingConfig cfg = base_;
  cfg.parallelism = Parallelism{};
  cfg.parallelism.tp = tp;
  cfg.parallelism.pp = pp;
  cfg.parallelism.dp = replicas;
  cfg.parallelism.cp = cp;
  cfg.parallelism.ep = ep;
  cfg.parallelism.etp = etp;
  cfg.parallelism.sequence_parallel = sp;
  cfg.micro_batch = micro_batch;
  cfg.global_batch = micro_batch * replicas;
  cfg.pipeline_schedule = "1f1b";
  cfg.zero = 0;
  cfg.shard_group = 0;  // no sharding in the measuring runs
  cfg.recompute = recompute;
  cfg.offload = "none";
  cfg.first_stage_layers = cfg.last_stage_layers = 0;
  // The gradients' reduction over the replicas (with cp > 1 the CP ranks hold the same weights)
  // after the backward, not beside it: overlapped, its SMs would slow the second layer's backward
  // kernels in every measured pass, where a plan overlaps it with the last micro-batch's only
  // (the closed form adds what is exposed of it, exposed_gradient_sync).
  cfg.overlap_grad_reduce = false;
  double wgt = 0;  // the measured kind's layers are alike: its first layer's
  auto run = [&](int layers_per_stage) {
    // The analytical backend is kept per cluster size and forgets the previous graph's ops (it
    // caches durations by op address); a link-sharing one is built afresh for each graph.
    std::unique_ptr<sim::NetworkBackend>& kept = networks_[small.gpu_count()];
    std::unique_ptr<sim::NetworkBackend> fresh;
    if (!kept) kept = sim::make_network_backend(small, collective_, network_);
    if (kept->shares_links()) fresh = sim::make_network_backend(small, collective_, network_);
    sim::NetworkBackend* network = fresh ? fresh.get() : kept.get();
    network->forget_ops();
    ModelSpec m = model;
    m.layers = layers_per_stage * pp;
    const TrainingPlan plan(m, cfg, per_stage * pp, std::max(tp, small.gpus_per_node));
    const TrainingGraph tg = build_training_graph(plan, {small.gpu, kernel_});
    wgt = weight_gradient_time(plan, {small.gpu, kernel_}, 0);
    sim::Engine engine(tg.graph, &tg.comm_ops, network);
    engine.slow_compute_during_comm(comm_compute_shares(tg, small.gpu, collective_));
    return stage_passes(tg, engine.run());
  };
  const std::vector<StagePasses> one = run(1), two = run(2);
  LayerCost c;
  c.layer_fwd = two[0].fwd;
  c.layer_fwd -= one[0].fwd;
  c.layer_bwd = two[0].bwd;
  c.layer_bwd -= one[0].bwd;
  c.layer_wgt = wgt;
  c.embed_fwd = one[0].fwd;
  c.embed_fwd -= c.layer_fwd;
  c.embed_bwd = one[0].bwd;
  c.embed_bwd -= c.layer_bwd;
  if (pp == 2) {
    c.head_fwd = one[1].fwd;
    c.head_fwd -= c.layer_fwd;
    c.head_bwd = one[1].bwd;
    c.head_bwd -= c.layer_bwd;
  } else {  // one stage holds both ends
    c.head_fwd = c.embed_fwd;
    c.head_bwd = c.embed_bwd;
    c.embed_fwd = c.embed_bwd = PassCost{};
  }
  return c;
}

}  // namespace exasim::workloads::planner
