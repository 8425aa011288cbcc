#pragma once
// A serving cluster run: requests arrive from a source, a router hands each to a replica of the
// front pool (mixed, or prefill), replicas iterate, and with disaggregation every prompt's KV
// crosses the network to a decode replica.
//
// The run is its own discrete-event loop over iterations rather than an ExecGraph: a replica's
// next batch depends on what the previous iteration finished, so the graph cannot be built ahead,
// and one event per iteration (instead of tasks per kernel) is what makes a million requests fast.
// It keeps sim's ordering convention: events ordered by (time, sequence number), so equal inputs
// give equal outputs bit for bit. All events at one instant are handled before idle replicas
// schedule, so requests arriving together are batched together.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "models/cost/cost_model.hpp"
#include "sim/network_backend.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model/model_spec.hpp"
#include "workloads/serving/latency_histogram.hpp"
#include "workloads/serving/request.hpp"
#include "workloads/serving/serving_config.hpp"
#include "workloads/serving/serving_memory.hpp"
#include "workloads/serving/serving_metrics.hpp"

namespace exasim::workloads::serving {

struct ServingInputs {
  const ModelSpec& model;
  const topologies::Cluster& cluster;
  const ServingConfig& config;
  models::CollectiveParams collective;
  models::CostRates cost;
  std::uint64_t seed = 1;
  sim::NetworkBackend* network = nullptr;  // KV transfers; null: the analytical backend
  std::function<void(const RequestRecord&)> on_request;  // per-request records (optional)
};

struct PoolResult {
  PoolRole role = PoolRole::kMixed;
  int replicas = 0;
  ReplicaParallelism parallelism;
  std::string gpu;
  ReplicaMemory memory;
  double busy_fraction = 0;  // mean over the pool's replicas
  std::int64_t iterations = 0;
  double linear_fraction = 0, attention_fraction = 0, cpu_fraction = 0;  // of the pool's busy time
  double mean_decode_batch = 0;  // decoding sequences per iteration
};

struct ServingResult {
  std::uint64_t completed = 0;
  std::uint64_t rejected = 0;  // prompts larger than a replica's whole KV cache
  double duration_s = 0;       // first arrival -> last token
  double requests_per_s = 0;
  double input_tokens_per_s = 0;
  double output_tokens_per_s = 0;
  LatencySummary ttft, tpot, itl, e2e, queueing;
  double slo_attainment = 0;
  double goodput_requests_per_s = 0;
  double kv_peak_utilization = 0;  // max over replicas
  double kv_mean_utilization = 0;  // busy-time weighted, over replicas
  std::int64_t preemptions = 0;
  double prefix_hit_rate = 0;      // prompt tokens found in the prefix cache / prompt tokens
  double kv_transfer_bytes = 0;
  double gpu_power_w = 0;          // mean per serving GPU
  double power_avg_w = 0;          // cluster IT power
  double energy_j = 0;
  double energy_per_token_j = 0;   // per output token
  models::CostSummary cost;
  std::int64_t iterations = 0;
  std::int64_t events = 0;
  std::vector<PoolResult> pools;
};

// Runs `source` to exhaustion. Throws PlanError when a replica does not fit or the cluster lacks GPUs.
ServingResult simulate_serving(const ServingInputs& in, RequestSource& source);

}  // namespace exasim::workloads::serving
