#pragma once
// Lowering of a training iteration to an ExecGraph. Symmetry: the ranks of a TP group and the
// replicas of a DP group do identical work on a uniform cluster, so one GPU per pipeline stage
// is simulated and its collectives are costed on the full groups.
#include <cstdint>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/calibration/calibration_file.hpp"
#include "models/kernel/kernel_params.hpp"
#include "sim/exec_graph.hpp"
#include "sim/network_backend.hpp"
#include "topologies/cluster.hpp"
#include "workloads/training/training_plan.hpp"

namespace exasim::workloads {

// Task categories (ExecGraph::Task::category) used by the metrics.
enum TrainingCategory : std::uint16_t {
  kForwardTask = 1,
  kBackwardTask,
  kRecomputeTask,
  kOptimizerTask,
  kTensorCommTask,
  kDataCommTask,
  kPipelineCommTask,
  kOffloadTask,  // optimizer offload: gradients to the host, the CPU's optimizer step, weights back
  kHostTask,     // the framework's host work (models::HostOverheads)
};

struct StageStreams {
  sim::DeviceId device = 0;
  sim::StreamId compute = 0;
  sim::StreamId tp_comm = 0;   // tensor-parallel collectives (block the next kernel)
  sim::StreamId dp_comm = 0;   // gradient reduction, overlapped with the backward pass
  sim::StreamId p2p = 0;       // pipeline sends
  sim::StreamId dp_gather = sim::kNone;  // ZeRO-3/FSDP weight all-gathers (prefetched one layer ahead), or ZeRO-1/2 ones overlapped with the next forward
  sim::StreamId offload = 0;   // optimizer offload: PCIe copies and the host's optimizer step
  sim::StreamId param_fetch = 0;  // parameter offload: each layer's shard copied from the host before its gather
  sim::StreamId host = sim::kNone;  // the framework's host thread (only with host overheads)
};

// How a comm op is run, which decides how many of the GPU's SMs it holds meanwhile
// (models::CollectiveParams, *_sms): by NCCL's kernels, or, for TP communication overlapped with
// GEMMs, by Transformer Engine's userbuffers.
enum class CommIssuer : std::uint8_t { kNccl, kUserBuffers };

struct TrainingGraph {
  sim::ExecGraph graph;
  std::vector<sim::CommOp> comm_ops;
  std::vector<CommIssuer> comm_issuers;  // per comm op (the lowering fills both together)
  std::vector<StageStreams> stages;
};

// The share of a GPU's compute a communication holding `sms` SMs takes while it runs: a library
// never takes every SM (NCCL caps its channels well below a GPU's SM count).
double comm_compute_share(const hw::GpuSpec& gpu, double sms);
// Per comm op, the share of its GPU's compute it takes while it runs (sim::Engine::slow_compute_during_comm).
std::vector<double> comm_compute_shares(const TrainingGraph& tg, const hw::GpuSpec& gpu,
                                        const models::CollectiveParams& collective);

struct KernelContext {
  const hw::GpuSpec& gpu;
  models::KernelParams params;
  const topologies::HostSide* host = nullptr;  // the node's CPUs and PCIe (optimizer offload)
  models::HostOverheads overheads = {};        // the framework's host work (calibration `training:`)
};

TrainingGraph build_training_graph(const TrainingPlan& plan, const KernelContext& kernels);

// Kernel time of the weight-gradient GEMMs of layer `layer` of the plan's model for one
// micro-batch: the pass zero-bubble schedules split off the backward (their W), at the
// sustained clocks of a training step.
double weight_gradient_time(const TrainingPlan& plan, const KernelContext& kernels, int layer);

}  // namespace exasim::workloads
