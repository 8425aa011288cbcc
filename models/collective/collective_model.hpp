#pragma once
// Closed-form alpha-beta cost of NCCL-style collectives on a group of GPUs spread evenly over
// nodes, without a topology: each algorithm step costs a latency (alpha) plus its bytes over the
// bottleneck bandwidth of that step (beta), with the fastest of NCCL's protocols (Simple, LL128,
// LL: their rates, step and base latencies; send/recv Simple only). The network backends
// (sim/net/) cost collectives over the real topology instead; this model is their hand-checkable
// reference for uniform groups on a non-blocking network (tests/network).
#include <string>
#include <string_view>

#include "models/collective/collective.hpp"
#include "models/collective/collective_params.hpp"

namespace exasim::models {

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

struct CollectiveCost {
  double time_s = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  double algorithm_bandwidth = 0;  // bytes / time
  double bus_bandwidth = 0;        // nccl-tests convention: algbw x the op's bus factor
};

// `bytes` is the whole buffer: the all-reduce buffer, the gathered (all-gather) or unscattered
// (reduce-scatter) size, the per-rank send buffer of all-to-all, the broadcast or sent message.
// Algorithms this model knows: ring, hierarchical, tree (all-reduce); others cost infinity.
CollectiveCost collective_cost(Collective op, double bytes, GroupShape group, const GroupLinks& links,
                               const CollectiveParams& params,
                               CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto);

}  // namespace exasim::models
