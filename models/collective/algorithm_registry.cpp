#include <string>

#include "hw/error.hpp"
#include "models/collective/algorithm.hpp"

namespace exasim::models {

const std::vector<AlgorithmInfo>& algorithm_table() {
  static const std::vector<AlgorithmInfo> table = {
      {CollectiveAlgorithm::kRing, "rings through the group, one hop per step; NCCL's bandwidth-optimal default",
       ring_supports, ring_schedule},
      {CollectiveAlgorithm::kTree,
       "double binary tree over nodes with a chain inside each node (all-reduce); log-depth latency",
       tree_supports, tree_schedule},
      {CollectiveAlgorithm::kHalvingDoubling,
       "recursive halving reduce-scatter + doubling all-gather (Rabenseifner); log2(n) exchanges",
       halving_doubling_supports, halving_doubling_schedule},
      {CollectiveAlgorithm::kDirect,
       "every member to every member at once (all-to-all, send/recv, one-shot all-reduce on meshes)",
       direct_supports, direct_schedule},
      {CollectiveAlgorithm::kHierarchical,
       "intra-node reduce-scatter, inter-node ring per rail on 1/k shards, intra-node all-gather",
       hierarchical_supports, hierarchical_schedule},
      {CollectiveAlgorithm::kNvls, "in-switch reduction on NVSwitch gen3+ (NVLink SHARP), hierarchical across nodes",
       nvls_supports, nvls_schedule},
  };
  return table;
}

const AlgorithmInfo& algorithm_info(CollectiveAlgorithm a) {
  for (const AlgorithmInfo& info : algorithm_table())
    if (info.id == a) return info;
  throw ConfigError("no collective algorithm '" + std::string(algorithm_name(a)) + "'", {},
                    "name a concrete algorithm, not auto");
}

bool algorithm_supports(CollectiveAlgorithm a, Collective op, const GroupLayout& g) {
  return a != CollectiveAlgorithm::kAuto && algorithm_info(a).supports(op, g);
}

Schedule build_schedule(CollectiveAlgorithm a, const ScheduleRequest& r) {
  if (!algorithm_supports(a, r.op, *r.layout)) {
    throw ConfigError("algorithm " + std::string(algorithm_name(a)) + " cannot run " +
                          std::string(collective_name(r.op)) + " on this group of " + std::to_string(r.layout->size()) +
                          " ranks on " + std::to_string(r.layout->nodes()) + " nodes",
                      {}, "use algorithm auto, or see `exasim collective --help` for what each algorithm supports");
  }
  return algorithm_info(a).build(r);
}

std::vector<CollectiveAlgorithm> auto_candidates(Collective op, const GroupLayout& g) {
  std::vector<CollectiveAlgorithm> out;
  auto consider = [&](CollectiveAlgorithm a) {
    if (algorithm_supports(a, op, g)) out.push_back(a);
  };
  switch (op) {
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      consider(CollectiveAlgorithm::kRing);
      consider(CollectiveAlgorithm::kTree);
      consider(CollectiveAlgorithm::kNvls);
      // On a mesh (a link per GPU pair) one ring uses one link per GPU; RCCL's rings together
      // use them all, which the one-shot exchange stands for. Through a switch the ring already
      // fills each GPU's port, and NCCL has no one-shot reduction.
      if (g.nodes() == 1 && g.mesh) consider(CollectiveAlgorithm::kDirect);
      break;
    case Collective::kBroadcast:
    case Collective::kReduce: consider(CollectiveAlgorithm::kRing); break;
    case Collective::kAllToAll:
    case Collective::kSendRecv: consider(CollectiveAlgorithm::kDirect); break;
  }
  return out;
}

}  // namespace exasim::models
