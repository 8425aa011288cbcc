#pragma once
// Simulates one training iteration of a plan on a cluster and derives the reported metrics.
#include <memory>

#include "models/collective/collective_model.hpp"
#include "models/cost/cost_model.hpp"
#include "models/kernel/kernel_params.hpp"
#include "sim/net/network_options.hpp"
#include "sim/timeline.hpp"
#include "topologies/cluster.hpp"
#include "workloads/training/all_ranks.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_plan.hpp"

namespace exasim::workloads {

struct TimeBreakdown {
  double compute = 0;       // forward, backward and recompute kernels
  double exposed_comm = 0;  // communication no kernel overlapped
  double bubble = 0;        // idle, waiting for other pipeline stages
  double optimizer = 0;
  double offload = 0;
  double host = 0;          // the GPU waiting for the framework's host (MoE expert dispatch, ...)
};

struct TrainingResult {
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double samples_per_s = 0;
  double tflops_per_gpu = 0;  // model FLOPs (no recompute) per GPU per second / 1e12
  double mfu = 0;
  double hfu = 0;
  MemoryReport memory;
  double memory_capacity_bytes = 0;
  TimeBreakdown breakdown;    // seconds, averaged over pipeline stages
  double gpu_power_w = 0;     // average per GPU
  double power_avg_w = 0;     // whole cluster IT power (GPUs + rest of the nodes)
  double energy_per_iteration_j = 0;
  double energy_per_token_j = 0;
  models::CostSummary cost;
  std::size_t tasks = 0;
  std::uint64_t events = 0;
  // What ran: for --trace.
  std::shared_ptr<TrainingGraph> graph;
  std::shared_ptr<sim::Timeline> timeline;
};

struct TrainingInputs {
  const TrainingPlan& plan;
  const topologies::Cluster& cluster;
  models::KernelParams kernel;
  models::CollectiveParams collective;
  models::CostRates cost;
  sim::NetworkOptions network = {};  // backend (fidelity) and collective algorithms
  RankSimulation ranks = {};         // symmetry (default) or every rank, with stragglers
  models::HostOverheads host = {};   // the framework's host work (calibration `training:`)
};

// The network options a run uses: under symmetry, and with all ranks on a contention-free
// backend, an op also carries its copies on the other GPUs of its nodes (their traffic shares
// the NICs); a link-sharing backend with all ranks simulates those copies themselves.
sim::NetworkOptions run_network_options(const sim::NetworkOptions& base, const RankSimulation& ranks);

// Runs a training graph on the cluster's network; returns the timeline and the events processed.
sim::Timeline run_training_graph(const TrainingGraph& tg, const topologies::Cluster& cluster,
                                 const models::CollectiveParams& collective, const sim::NetworkOptions& network,
                                 const RankSimulation& ranks, std::uint64_t* events = nullptr);

// One iteration's time: the makespan, or with a schedule whose ranks do not wait for each other
// between iterations (ScheduleInfo::steady_state_period) the longest GPU's span, from its first
// kernel to its last task: in the steady state each rank starts the next iteration as soon as
// it ends this one, so the fill before a rank's first kernel overlaps the previous iteration.
double iteration_time(const TrainingGraph& tg, const sim::Timeline& tl, const TrainingConfig& config);

// The split of an iteration into kernels, exposed communication, exposed offload and bubble,
// averaged over the stages; `busy` (optional) receives a GPU's mean busy time.
TimeBreakdown time_breakdown(const TrainingGraph& tg, const sim::Timeline& tl, double iteration,
                             const TrainingConfig& config, double* busy = nullptr);

// Throws PlanError when the plan does not fit in GPU memory (nothing is simulated then).
TrainingResult simulate_training(const TrainingInputs& in);

// Checks memory only; throws the same PlanError as simulate_training.
MemoryReport check_training_memory(const TrainingPlan& plan, const topologies::Cluster& cluster);

}  // namespace exasim::workloads
