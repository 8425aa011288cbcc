#pragma once
// Alpha-beta cost of NCCL-style collectives on a group of GPUs spread evenly over nodes.
// Each algorithm step costs a latency (alpha) plus its bytes over the bottleneck bandwidth of
// that step (beta). Bandwidths are datasheet values; the achieved fraction and the per-step
// latencies are calibratable parameters.
#include <string>
#include <string_view>

namespace exasim::models {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSendRecv };
enum class CollectiveAlgorithm { kAuto, kRing, kHierarchical, kTree };

std::string_view collective_name(Collective c);
std::string_view algorithm_name(CollectiveAlgorithm a);

// Where the group sits: `ranks` GPUs, `ranks_per_node` of them on each node they touch.
struct GroupShape {
  int ranks = 1;
  int ranks_per_node = 1;
  int nodes() const { return (ranks + ranks_per_node - 1) / ranks_per_node; }
};

// The links the group uses (datasheet, per direction).
struct GroupLinks {
  double intra_bandwidth = 0;   // B/s per GPU into the node fabric
  double intra_latency = 0;     // s, fabric hop
  double inter_bandwidth = 0;   // B/s per GPU off the node (its share of the node's NICs)
  double inter_latency = 0;     // s, NIC to NIC
};

// Calibratable: achieved fraction of link bandwidth by NCCL, and software latency per step.
struct CollectiveParams {
  double intra_efficiency = 0.80;     // A100 NVLink: nccl-tests busbw 235 of 300 GB/s = 0.78 (gpu_specs.yaml)
  double inter_efficiency = 0.90;     // InfiniBand: ib_write_bw ~97% of line rate, NCCL ~90% (stated default)
  double step_overhead_s = 1.0e-6;    // per algorithm step, NCCL protocol cost (H100 8-GPU small
                                      // all-reduce 13-17 us over 14 ring steps, gpu_specs.yaml)
};

struct CollectiveCost {
  double time_s = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  double algorithm_bandwidth = 0;  // bytes / time
  double bus_bandwidth = 0;        // nccl-tests convention: algbw x the op's bus factor
};

// `bytes` is the whole buffer: the all-reduce buffer, the gathered (all-gather) or unscattered
// (reduce-scatter) size, the per-rank send buffer of all-to-all, the broadcast or sent message.
CollectiveCost collective_cost(Collective op, double bytes, GroupShape group, const GroupLinks& links,
                               const CollectiveParams& params,
                               CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto);

// nccl-tests bus-bandwidth factor: all-reduce 2(n-1)/n, reduce-scatter and all-gather (n-1)/n, ...
double bus_factor(Collective op, int ranks);

}  // namespace exasim::models
