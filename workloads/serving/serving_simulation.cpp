#include "workloads/serving/serving_simulation.hpp"

#include <algorithm>
#include <optional>
#include <queue>

#include "hw/error.hpp"
#include "models/power/gpu_power.hpp"
#include "sim/net/analytical_network.hpp"
#include "workloads/serving/kv_transfer.hpp"
#include "workloads/serving/replica.hpp"
#include "workloads/serving/router.hpp"

namespace exasim::workloads::serving {

namespace {

enum class EventKind : std::uint8_t { kArrival, kIterationDone, kTransferDone };

struct Event {
  double t = 0;
  std::uint64_t seq = 0;
  EventKind kind = EventKind::kArrival;
  std::uint32_t a = 0, b = 0, c = 0;
};

struct Later {
  bool operator()(const Event& x, const Event& y) const { return x.t > y.t || (x.t == y.t && x.seq > y.seq); }
};

// An MoE model's exchange on the expert all-to-all kernels (serving.moe_all_to_all) needs their
// fitted constants in the node's calibration and an expert-parallel group inside one NVLink
// domain (the kernels' internode variants are not modelled).
void check_moe_all_to_all(const ServingInputs& in) {
  const ServingConfig& cfg = in.config;
  if (cfg.moe_all_to_all == MoeAllToAll::kNccl || !in.model.moe) return;
  const std::string kind = moe_all_to_all_name(cfg.moe_all_to_all);
  for (const PoolConfig& pc : cfg.pools) {
    const int ep = pc.parallelism.ep;
    if (ep <= 1) continue;
    if (ep > in.cluster.gpus_per_node)
      throw ConfigError("moe_all_to_all " + kind + " runs inside one NVLink domain of " +
                            std::to_string(in.cluster.gpus_per_node) + " GPUs; ep " + std::to_string(ep) + " spans nodes",
                        {"", 0, "serving.moe_all_to_all"}, "use moe_all_to_all: nccl, or ep <= " + std::to_string(in.cluster.gpus_per_node));
    for (const bool decode_only : {false, true})
      for (const models::ExpertAllToAllKey& key : expert_exchange_keys(cfg.moe_all_to_all, cfg.precision, decode_only))
        if (!in.collective.expert_all_to_all.contains(key))
          throw ConfigError("moe_all_to_all " + kind + ": the collective parameters (" + in.collective.source + ") have no " +
                                models::expert_all_to_all_key_name(key),
                            {"", 0, "serving.moe_all_to_all"},
                            "run on a node calibration that measured it (calibration: measured on dgx-h100, dgx-h200, dgx-b200 "
                            "for deepep; gb200-nvl72 for both), or moe_all_to_all: nccl");
  }
}

struct Pool {
  PoolConfig config;
  ReplicaMemory memory;
  std::vector<std::uint32_t> replicas;  // global replica indices
  std::unique_ptr<Router> router;
};

models::GroupLinks links_of(const topologies::Cluster& c) {
  models::GroupLinks l;
  l.intra_bandwidth = c.intra.bandwidth;
  l.intra_latency = c.intra.latency;
  if (c.inter) {
    l.inter_bandwidth = c.nic_bandwidth_per_gpu(c.gpus_per_node);
    l.inter_latency = c.inter->nic.latency;
  }
  return l;
}

class ServingRun {
 public:
  explicit ServingRun(const ServingInputs& in) : in_(in), metrics_(in.config.slo) {
    if (in.on_request) metrics_.set_sink(in.on_request);
    build();
    if (in.network) {
      network_ = in.network;
    } else {
      own_network_ = std::make_unique<sim::AnalyticalNetwork>(in.cluster, in.collective);
      network_ = own_network_.get();
    }
    transfer_ = std::make_unique<KvTransfer>(*network_, in.model, in.config.kv_dtype);
  }

  ServingResult run(RequestSource& source);

 private:
  void build();
  void push(double t, EventKind k, std::uint32_t a = 0, std::uint32_t b = 0, std::uint32_t c = 0) {
    events_.push({t, next_seq_++, k, a, b, c});
  }
  std::uint32_t route(Pool& pool, const Request& r);
  void mark(std::uint32_t replica) {
    if (!dirty_flag_[replica]) {
      dirty_flag_[replica] = true;
      dirty_.push_back(replica);
    }
  }
  void on_iteration_done(std::uint32_t replica, double now);
  void on_transfer_done(const Event& e);
  void start_idle(double now);
  ServingResult result() const;

  const ServingInputs& in_;
  ServingMetrics metrics_;
  std::vector<Pool> pools_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<std::uint32_t> first_rank_;
  std::vector<bool> dirty_flag_;
  std::vector<std::uint32_t> dirty_;
  std::vector<ReplicaLoad> loads_;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  std::uint64_t next_seq_ = 0;
  std::int64_t processed_ = 0;
  sim::NetworkBackend* network_ = nullptr;
  std::unique_ptr<sim::AnalyticalNetwork> own_network_;
  std::unique_ptr<KvTransfer> transfer_;
  double first_arrival_ = -1;
};

void ServingRun::build() {
  const ServingConfig& cfg = in_.config;
  if (cfg.gpus() > in_.cluster.gpu_count()) {
    throw PlanError("the deployment needs " + std::to_string(cfg.gpus()) + " GPUs, the cluster has " +
                        std::to_string(in_.cluster.gpu_count()),
                    {"", 0, "serving.replicas"}, "lower replicas or tp, or add nodes to the cluster");
  }
  check_moe_all_to_all(in_);
  const RouterInfo* router = find_router(cfg.router);
  if (!router) throw ConfigError("unknown router \"" + cfg.router + "\"", {"", 0, "serving.router"}, "use " + router_names());
  if (!find_batch_scheduler(cfg.scheduler))
    throw ConfigError("unknown scheduler \"" + cfg.scheduler + "\"", {"", 0, "serving.scheduler"}, "use " + batch_scheduler_names());
  std::uint32_t rank = 0;
  std::uint64_t router_seed = in_.seed;
  for (const PoolConfig& pc : cfg.pools) {
    Pool pool;
    pool.config = pc;
    pool.memory = replica_memory(in_.model, pc, cfg);
    pool.router = router->make(router_seed++);
    ReplicaLimits limits;
    limits.max_batch_tokens = cfg.max_batch_tokens;
    limits.max_num_seqs = cfg.max_num_seqs;
    limits.chunk_budget = cfg.chunked_prefill;
    limits.step_tokens = cfg.speculative ? cfg.speculative->tokens + 1 : 1;
    limits.preemption = cfg.preemption;
    limits.swap_capacity_blocks =
        static_cast<std::int64_t>(cfg.swap_space_bytes / (pool.memory.kv_bytes_per_token * cfg.block_tokens));
    limits.prefix_caching = cfg.prefix_caching;
    for (int i = 0; i < pc.replicas; ++i) {
      CostModelInputs ci{in_.model, pc.gpu, pc.kernel, in_.collective, links_of(in_.cluster), in_.cluster.gpus_per_node,
                         pc.parallelism, cfg.precision, cfg.kv_dtype, cfg.cpu_overhead_s, pc.host_bandwidth,
                         cfg.speculative ? &*cfg.speculative : nullptr, cfg.decode_attention_matrix, cfg.moe_all_to_all};
      ReplicaSetup setup{static_cast<int>(replicas_.size()), pc.role, cfg.scheduler, limits, pool.memory.kv_blocks,
                         cfg.block_tokens, cfg.watermark, pool.memory.kv_bytes_per_token, ci.speculative};
      if (cfg.sliding_window_kv_window && in_.model.sliding_window > 0) {
        setup.kv_full_layer_fraction = static_cast<double>(in_.model.layers - in_.model.sliding_layers()) / in_.model.layers;
        setup.kv_window = in_.model.sliding_window;
      }
      pool.replicas.push_back(static_cast<std::uint32_t>(replicas_.size()));
      replicas_.push_back(std::make_unique<Replica>(std::move(setup), IterationCostModel(std::move(ci)), &metrics_));
      first_rank_.push_back(rank);
      rank += static_cast<std::uint32_t>(pc.parallelism.gpus());
    }
    pools_.push_back(std::move(pool));
  }
  dirty_flag_.assign(replicas_.size(), false);
}

std::uint32_t ServingRun::route(Pool& pool, const Request& r) {
  const bool hits = pool.router->wants_prefix_hits();
  loads_.resize(pool.replicas.size());
  for (std::size_t i = 0; i < pool.replicas.size(); ++i) {
    const Replica& rep = *replicas_[pool.replicas[i]];
    loads_[i].outstanding = rep.outstanding();
    loads_[i].prefix_hit_tokens = hits ? rep.prefix_match_tokens(r) : 0;
  }
  return pool.replicas[pool.router->pick(r, loads_)];
}

void ServingRun::on_iteration_done(std::uint32_t index, double now) {
  Replica& rep = *replicas_[index];
  rep.finish_iteration(now);
  for (const Sequence& s : rep.finished()) metrics_.complete(s, static_cast<int>(index));
  rep.finished().clear();
  for (const SeqId id : rep.handoffs()) {
    const Sequence& s = rep.seq(id);
    const std::uint32_t dst = route(pools_.back(), s.req);
    const double d = transfer_->duration(s.computed, first_rank_[index], first_rank_[dst],
                                         rep.cost_model().inputs().parallelism.gpus(), now);
    push(now + d, EventKind::kTransferDone, index, id, dst);
  }
  rep.handoffs().clear();
  mark(index);
}

void ServingRun::on_transfer_done(const Event& e) {
  Replica& from = *replicas_[e.a];
  Sequence s = from.seq(e.b);
  s.prefill_replica = static_cast<int>(e.a);
  s.kv_transfer_bytes = transfer_->bytes(s.computed);
  from.release(e.b);
  replicas_[e.c]->add_prefilled(std::move(s));
  mark(e.a);
  mark(e.c);
}

void ServingRun::start_idle(double now) {
  for (const std::uint32_t i : dirty_) {
    dirty_flag_[i] = false;
    if (const auto d = replicas_[i]->start_iteration(now)) push(now + *d, EventKind::kIterationDone, i);
  }
  dirty_.clear();
}

ServingResult ServingRun::run(RequestSource& source) {
  std::optional<Request> next = source.next();
  if (next) push(next->arrival_s, EventKind::kArrival);
  while (!events_.empty()) {
    const Event e = events_.top();
    events_.pop();
    ++processed_;
    switch (e.kind) {
      case EventKind::kArrival: {
        Request r = std::move(*next);
        if (first_arrival_ < 0) first_arrival_ = r.arrival_s;
        next = source.next();
        if (next) push(std::max(e.t, next->arrival_s), EventKind::kArrival);
        const std::uint32_t to = route(pools_.front(), r);
        replicas_[to]->add(std::move(r));
        mark(to);
        break;
      }
      case EventKind::kIterationDone: on_iteration_done(e.a, e.t); break;
      case EventKind::kTransferDone: on_transfer_done(e); break;
    }
    if (events_.empty() || events_.top().t > e.t) start_idle(e.t);
  }
  return result();
}

ServingResult ServingRun::result() const {
  ServingResult r;
  const ServingMetrics& m = metrics_;
  r.completed = m.completed();
  r.events = processed_;
  r.duration_s = r.completed ? m.last_finish_s() - std::max(0.0, first_arrival_) : 0;
  const double t = r.duration_s > 0 ? r.duration_s : 1;
  if (r.completed) {
    r.requests_per_s = static_cast<double>(r.completed) / t;
    r.input_tokens_per_s = m.input_tokens() / t;
    r.output_tokens_per_s = m.output_tokens() / t;
    r.slo_attainment = static_cast<double>(m.slo_met()) / static_cast<double>(r.completed);
    r.goodput_requests_per_s = static_cast<double>(m.slo_met()) / t;
    r.prefix_hit_rate = m.input_tokens() > 0 ? m.prefix_hit_tokens() / m.input_tokens() : 0;
  }
  r.ttft = m.ttft().summary();
  r.tpot = m.tpot().summary();
  r.itl = m.itl().summary();
  r.e2e = m.e2e().summary();
  r.queueing = m.queueing().summary();
  r.kv_transfer_bytes = m.kv_transfer_bytes();
  double busy_all = 0, power = 0;
  int serving_gpus = 0;
  for (const Pool& pool : pools_) {
    PoolResult pr{pool.config.role, pool.config.replicas, pool.config.parallelism, pool.config.gpu.name, pool.memory, 0, 0};
    double pool_busy = 0;
    for (const std::uint32_t i : pool.replicas) {
      const Replica& rep = *replicas_[i];
      const ReplicaStats& st = rep.stats();
      const double busy = std::min(1.0, st.busy_s / t);
      pr.busy_fraction += busy / pool.config.replicas;
      pr.iterations += st.iterations;
      pool_busy += st.busy_s;
      pr.linear_fraction += st.linear_s;
      pr.attention_fraction += st.attention_s;
      pr.cpu_fraction += st.cpu_s;
      pr.mean_decode_batch += st.decode_seq_iterations;
      r.iterations += st.iterations;
      r.preemptions += rep.preemptions();
      r.rejected += static_cast<std::uint64_t>(rep.rejected());
      r.kv_peak_utilization = std::max(r.kv_peak_utilization, st.kv_peak_utilization);
      r.kv_mean_utilization += st.kv_utilization_time;
      busy_all += st.busy_s;
      const int gpus = pool.config.parallelism.gpus();
      power += gpus * models::gpu_power_w(pool.config.gpu, busy);
      serving_gpus += gpus;
    }
    if (pool_busy > 0) pr.linear_fraction /= pool_busy, pr.attention_fraction /= pool_busy, pr.cpu_fraction /= pool_busy;
    if (pr.iterations > 0) pr.mean_decode_batch /= static_cast<double>(pr.iterations);
    r.pools.push_back(pr);
  }
  r.kv_mean_utilization = busy_all > 0 ? r.kv_mean_utilization / busy_all : 0;
  const topologies::Cluster& c = in_.cluster;
  r.gpu_power_w = serving_gpus ? power / serving_gpus : 0;
  power += (c.gpu_count() - serving_gpus) * c.gpu.idle_power_w + c.node_power_other_w * c.nodes;
  r.power_avg_w = power;
  r.energy_j = power * r.duration_s;
  r.energy_per_token_j = m.output_tokens() > 0 ? r.energy_j / m.output_tokens() : 0;
  r.cost = models::running_cost(in_.cost, c.gpu_count(), power, r.output_tokens_per_s);
  return r;
}

}  // namespace

ServingResult simulate_serving(const ServingInputs& in, RequestSource& source) {
  ServingRun run(in);
  return run.run(source);
}

}  // namespace exasim::workloads::serving
