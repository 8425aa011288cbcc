#include "workloads/training/training_simulation.hpp"

#include <algorithm>

#include "hw/error.hpp"
#include "hw/units.hpp"
#include "models/power/gpu_power.hpp"
#include "sim/net/network_registry.hpp"
#include "sim/engine.hpp"
#include "sim/interval_set.hpp"
#include "workloads/training/model_flops.hpp"
#include "workloads/training/offload_costs.hpp"
#include "workloads/training/pipeline_schedule.hpp"

namespace exasim::workloads {

namespace {

std::string gib(double bytes) { return units::format(bytes, units::Dimension::kBytes, 3); }

struct StageTimes {
  double compute = 0, optimizer = 0, exposed_comm = 0, exposed_offload = 0, exposed_host = 0, busy = 0;
};

// Time split of one stage's GPU over the iteration.
StageTimes stage_times(const TrainingGraph& tg, const sim::Timeline& tl, const StageStreams& st, const TrainingConfig& c) {
  StageTimes out;
  std::vector<sim::Interval> busy, comm, offload, host;
  for (sim::TaskId id : tg.graph.stream_tasks(st.compute)) {
    const auto& task = tg.graph.task(id);
    const auto& r = tl[id];
    busy.emplace_back(r.start, r.end);
    (task.category == kOptimizerTask ? out.optimizer : out.compute) += r.end - r.start;
  }
  std::vector<sim::StreamId> comm_streams = {st.tp_comm, st.dp_comm, st.p2p};
  if (st.dp_gather != sim::kNone) comm_streams.push_back(st.dp_gather);
  for (sim::StreamId s : comm_streams)
    for (sim::TaskId id : tg.graph.stream_tasks(s)) comm.emplace_back(tl[id].start, tl[id].end);
  if (c.offload != "none")
    for (sim::TaskId id : tg.graph.stream_tasks(st.offload)) offload.emplace_back(tl[id].start, tl[id].end);
  if (c.offload == "params-cpu" || c.offload == "nvme")
    for (sim::TaskId id : tg.graph.stream_tasks(st.param_fetch)) offload.emplace_back(tl[id].start, tl[id].end);
  if (st.host != sim::kNone)
    for (sim::TaskId id : tg.graph.stream_tasks(st.host)) host.emplace_back(tl[id].start, tl[id].end);
  const auto busy_merged = sim::merge_intervals(std::move(busy));
  out.busy = sim::total_length(busy_merged);
  auto comm_merged = sim::merge_intervals(std::move(comm));
  out.exposed_comm = sim::uncovered_length(comm_merged, busy_merged);
  // Offload time neither a kernel nor a collective hid.
  comm_merged.insert(comm_merged.end(), busy_merged.begin(), busy_merged.end());
  auto offload_merged = sim::merge_intervals(std::move(offload));
  auto covered = sim::merge_intervals(std::move(comm_merged));
  out.exposed_offload = sim::uncovered_length(offload_merged, covered);
  // Host work nothing on the GPU's streams hid: the GPU waited for its host.
  covered.insert(covered.end(), offload_merged.begin(), offload_merged.end());
  out.exposed_host = sim::uncovered_length(sim::merge_intervals(std::move(host)), sim::merge_intervals(std::move(covered)));
  return out;
}

void add_throughput(TrainingResult& r, const TrainingPlan& plan, const topologies::Cluster& cluster) {
  const TrainingConfig& c = plan.config();
  const double t = r.iteration_time_s;
  const int gpus = cluster.gpu_count();
  r.tokens_per_s = plan.tokens_per_iteration() / t;
  r.samples_per_s = c.global_batch / t;
  const double model_flops = step_flops_per_forward(c) * model_forward_flops(plan.model(), c) * plan.micro_batches() * plan.par().dp;
  r.tflops_per_gpu = model_flops / t / gpus / 1e12;
  const double peak = cluster.gpu.peak(c.precision);
  r.mfu = model_flops / t / gpus / peak;
  // HFU adds what recompute executes again, in MFU's convention (the model FLOP formula counts the
  // full attention score matrix, the kernels only the causal half), so HFU >= MFU always.
  double executed = 0, recomputed = 0;
  for (const auto& task : r.graph->graph.tasks()) {
    if (task.kind != sim::TaskKind::kCompute || task.category == kOptimizerTask) continue;
    executed += task.flops;
    if (task.category == kRecomputeTask) recomputed += task.flops;
  }
  r.hfu = executed > recomputed ? r.mfu * executed / (executed - recomputed) : r.mfu;
}

void add_time_split_and_power(TrainingResult& r, const TrainingInputs& in) {
  double busy = 0;
  r.breakdown = time_breakdown(*r.graph, *r.timeline, r.iteration_time_s, in.plan.config(), &busy);
  const topologies::Cluster& cl = in.cluster;
  r.gpu_power_w = models::gpu_power_w(cl.gpu, busy / r.iteration_time_s);
  r.power_avg_w = r.gpu_power_w * cl.gpu_count() + cl.node_power_other_w * cl.nodes;
  r.energy_per_iteration_j = r.power_avg_w * r.iteration_time_s;
  r.energy_per_token_j = r.energy_per_iteration_j / in.plan.tokens_per_iteration();
  r.cost = models::running_cost(in.cost, cl.gpu_count(), r.power_avg_w, r.tokens_per_s);
}

}  // namespace

double iteration_time(const TrainingGraph& tg, const sim::Timeline& tl, const TrainingConfig& config) {
  const ScheduleInfo* schedule = find_pipeline_schedule(config.pipeline_schedule);
  if (!schedule || !schedule->steady_state_period) return tl.makespan();
  const sim::ExecGraph& g = tg.graph;
  std::vector<double> first_kernel(g.devices().size(), -1), end(g.devices().size(), 0);
  for (sim::StreamId s = 0; s < g.streams().size(); ++s) {
    const sim::DeviceId d = g.streams()[s].device;
    if (g.stream_last(s) != sim::kNone) end[d] = std::max(end[d], tl[g.stream_last(s)].end);
    if (g.streams()[s].kind == sim::StreamKind::kCompute && g.stream_first(s) != sim::kNone) {
      const double start = tl[g.stream_first(s)].start;
      first_kernel[d] = first_kernel[d] < 0 ? start : std::min(first_kernel[d], start);
    }
  }
  double period = 0;
  for (std::size_t d = 0; d < end.size(); ++d) period = std::max(period, end[d] - std::max(0.0, first_kernel[d]));
  return period;
}

TimeBreakdown time_breakdown(const TrainingGraph& tg, const sim::Timeline& tl, double iteration,
                             const TrainingConfig& config, double* busy_fraction_time) {
  TimeBreakdown b;
  const double pp = static_cast<double>(tg.stages.size());
  double busy = 0;
  for (const StageStreams& st : tg.stages) {
    const StageTimes s = stage_times(tg, tl, st, config);
    b.compute += s.compute / pp;
    b.optimizer += s.optimizer / pp;
    b.exposed_comm += s.exposed_comm / pp;
    b.offload += s.exposed_offload / pp;
    b.host += s.exposed_host / pp;
    busy += s.busy / pp;
  }
  b.bubble = std::max(0.0, iteration - b.compute - b.optimizer - b.exposed_comm - b.offload - b.host);
  // What is left of the sum's rounding when no stage waits (one stage: 1e-16 s, printed as "0.0004 ps").
  if (b.bubble < 1e-9 * iteration) b.bubble = 0;
  if (busy_fraction_time) *busy_fraction_time = busy;
  return b;
}

MemoryReport check_training_memory(const TrainingPlan& plan, const topologies::Cluster& cluster) {
  MemoryReport mem = training_memory(plan);
  const StageMemory& p = mem.peak();
  const double cap = cluster.gpu.hbm_capacity_bytes;
  if (p.total() > cap) {
    throw PlanError("does not fit: needs " + gib(p.total()) + " of " + gib(cap) + " per GPU (stage " +
                        std::to_string(mem.peak_stage) + ": weights " + gib(p.weights) + ", gradients " +
                        gib(p.gradients) + ", optimizer " + gib(p.optimizer) + ", activations " +
                        gib(p.activations) + " for " + std::to_string(p.in_flight) + " micro-batches, " +
                        (p.gathered > 0 ? "gathered layers " + gib(p.gathered) + ", " : std::string()) + "NCCL buffers " +
                        gib(p.buffers) + ", fragmentation " + gib(p.fragmentation) + ")",
                    {"", 0, "training"},
                    plan.config().recompute_layers > 0
                        ? "raise recompute_layers (up to every layer of a model chunk), tp or pp, use zero: 1..3, or a smaller micro_batch"
                        : "raise tp or pp, use zero: 1..3, recompute: selective or full (recompute_layers: N for the first N "
                          "layers of each model chunk), or a smaller micro_batch");
  }
  // ZeRO-Offload keeps fp32 master weights, both Adam moments and fp32 gradients (16 B per owned
  // parameter) in the host memory that the node's GPUs share; ZeRO-Infinity also the 16-bit
  // parameters (2 B more).
  const std::string& offload = plan.config().offload;
  if (offload != "none" && cluster.host && cluster.host->memory_bytes > 0) {
    double per_gpu = 0;  // host bytes of the GPU that offloads the most
    const bool sharded = plan.config().zero >= 1;
    for (int s = 0; s < plan.par().pp; ++s) {
      // The optimizer states this GPU owns (its shard of the dense and of the expert weights;
      // LoRA: of the adapters) and, with LoRA, its shard of the frozen weights.
      const SharedParameters trains = stage_trainable_parameters(plan, s);
      const double owned = sharded ? trains.dense / plan.shard_size() + trains.expert / plan.expert_shard_size() : trains.total();
      const double frozen = plan.config().lora ? stage_parameters(plan, s).total() / (sharded ? plan.shard_size() : 1) : 0;
      per_gpu = std::max(per_gpu, offload_host_bytes(offload, owned, frozen));
    }
    // On NVMe only the fp32 gradients (4 B) stay in host memory.
    const double per_param = offload_host_bytes_per_param(offload);
    const double host = per_gpu * cluster.gpus_per_node;
    if (host > cluster.host->memory_bytes) {
      throw PlanError("offload does not fit in host memory: needs " + gib(host) + " of " +
                          gib(cluster.host->memory_bytes) + " per node (" + std::to_string(int(per_param)) +
                          " B per owned parameter" + (plan.config().lora && offload == "params-cpu" ? " and 2 B per frozen one" : "") +
                          " x " + std::to_string(cluster.gpus_per_node) + " GPUs)",
                      {"", 0, "training.offload"}, "use more data parallelism (zero: 1 or 2 shards the states) or offload: none");
    }
  }
  return mem;
}

sim::NetworkOptions run_network_options(const sim::NetworkOptions& base, const RankSimulation& ranks) {
  sim::NetworkOptions options = base;
  options.symmetric_copies = !ranks.all_ranks || options.backend == "analytical";
  return options;
}

sim::Timeline run_training_graph(const TrainingGraph& tg, const topologies::Cluster& cluster,
                                 const models::CollectiveParams& collective, const sim::NetworkOptions& network,
                                 const RankSimulation& ranks, std::uint64_t* events) {
  const auto backend = sim::make_network_backend(cluster, collective, run_network_options(network, ranks));
  sim::Engine engine(tg.graph, &tg.comm_ops, backend.get());
  engine.join_identical_collectives(ranks.all_ranks);
  engine.slow_compute_during_comm(comm_compute_shares(tg, cluster.gpu, collective));
  sim::Timeline tl = engine.run();
  if (events) *events = engine.stats().events;
  return tl;
}

TrainingResult simulate_training(const TrainingInputs& in) {
  TrainingResult r;
  r.memory = check_training_memory(in.plan, in.cluster);
  r.memory_capacity_bytes = in.cluster.gpu.hbm_capacity_bytes;
  r.graph = std::make_shared<TrainingGraph>(
      build_training_graph(in.plan, {in.cluster.gpu, in.kernel, in.cluster.host ? &*in.cluster.host : nullptr, in.host}));
  if (!in.ranks.stragglers.empty() && !in.ranks.all_ranks) {
    throw PlanError("stragglers need every rank simulated", {"", 0, "simulation.stragglers"}, "set simulation.all_ranks: true");
  }
  if (in.ranks.all_ranks) r.graph = std::make_shared<TrainingGraph>(expand_to_all_ranks(*r.graph, in.plan, in.ranks.stragglers));
  r.timeline = std::make_shared<sim::Timeline>(
      run_training_graph(*r.graph, in.cluster, in.collective, in.network, in.ranks, &r.events));
  r.tasks = r.graph->graph.task_count();
  r.iteration_time_s = iteration_time(*r.graph, *r.timeline, in.plan.config());
  add_throughput(r, in.plan, in.cluster);
  add_time_split_and_power(r, in);
  return r;
}

}  // namespace exasim::workloads
