// Hierarchical all-reduce (and its halves): reduce-scatter inside every node on a ring, then
// each rail (the members with the same position in their node) all-reduces its shard across the
// nodes on a ring, then all-gather inside every node. The inter-node rings run in parallel, one
// per rail, so every NIC of a node carries 1/k of the data.
#include "models/collective/algorithm.hpp"

namespace exasim::models {

namespace {

std::vector<std::vector<int>> rails(const std::vector<std::vector<int>>& nodes) {
  std::vector<std::vector<int>> out(nodes[0].size());
  for (const auto& members : nodes)
    for (std::size_t j = 0; j < members.size(); ++j) out[j].push_back(members[j]);
  return out;
}

}  // namespace

bool hierarchical_supports(Collective op, const GroupLayout& g) {
  if (op != Collective::kAllReduce && op != Collective::kReduceScatter && op != Collective::kAllGather) return false;
  const auto nodes = g.by_node();
  return nodes.size() >= 2 && nodes[0].size() >= 2 && g.uniform();
}

// Shared with NVLS: the inter-node part on shards of 1/k, given the node layout.
Phase hierarchical_inter(Collective op, const std::vector<std::vector<int>>& nodes) {
  const int k = static_cast<int>(nodes[0].size());
  const int m = static_cast<int>(nodes.size());
  const int rounds = op == Collective::kAllReduce ? 2 * (m - 1) : m - 1;
  return ring_round(rails(nodes), 1.0 / (static_cast<double>(k) * m), rounds);
}

Schedule hierarchical_schedule(const ScheduleRequest& r) {
  const auto nodes = r.layout->by_node();
  const int k = static_cast<int>(nodes[0].size());
  const Phase intra = ring_round(nodes, 1.0 / k, k - 1);
  Schedule s;
  s.algorithm = CollectiveAlgorithm::kHierarchical;
  if (r.op != Collective::kAllGather) s.phases.push_back(intra);
  s.phases.push_back(hierarchical_inter(r.op, nodes));
  if (r.op != Collective::kReduceScatter) s.phases.push_back(intra);
  return s;
}

}  // namespace exasim::models
