// Ring algorithms: the data moves around rings of members, one hop per round. As NCCL does,
// several channels (rings) split the data when the group spans several nodes with several
// members each: channel c enters every node at its c-th member, so the channels leave a node
// through different GPUs and NICs.
#include <algorithm>

#include "models/collective/algorithm.hpp"

namespace exasim::models {

namespace {

std::vector<std::vector<int>> channel_rings(const GroupLayout& g) {
  const auto nodes = g.by_node();
  if (nodes.size() == 1) return {nodes[0]};
  std::size_t channels = nodes[0].size();
  for (const auto& m : nodes) channels = std::min(channels, m.size());
  std::vector<std::vector<int>> rings(channels);
  for (std::size_t c = 0; c < channels; ++c) {
    for (const auto& members : nodes)
      for (std::size_t i = 0; i < members.size(); ++i) rings[c].push_back(members[(c + i) % members.size()]);
  }
  return rings;
}

// Broadcast and reduce: a pipelined chain from (to) the root along each channel's ring.
Phase chain(std::vector<std::vector<int>> rings, int root, bool toward_root) {
  PhaseBuilder b;
  const double share = 1.0 / static_cast<double>(rings.size());
  std::size_t hops = 0;
  for (auto& ring : rings) {
    std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), root), ring.end());
    for (std::size_t i = 0; i + 1 < ring.size(); ++i) {
      if (toward_root) b.add(ring[i + 1], ring[i], share);
      else b.add(ring[i], ring[i + 1], share);
    }
    hops = std::max(hops, ring.size() - 1);
  }
  return b.take(1, static_cast<int>(hops));
}

}  // namespace

Phase ring_round(const std::vector<std::vector<int>>& rings, double fraction, int repeat) {
  PhaseBuilder b;
  for (const auto& ring : rings) {
    for (std::size_t i = 0; i < ring.size(); ++i) b.add(ring[i], ring[(i + 1) % ring.size()], fraction);
  }
  return b.take(repeat, 1);
}

bool ring_supports(Collective op, const GroupLayout& g) {
  if (g.size() < 2) return false;
  return op == Collective::kAllReduce || op == Collective::kReduceScatter || op == Collective::kAllGather ||
         op == Collective::kBroadcast || op == Collective::kReduce;
}

Schedule ring_schedule(const ScheduleRequest& r) {
  const GroupLayout& g = *r.layout;
  const int n = g.size();
  const auto rings = channel_rings(g);
  const double hop = 1.0 / (static_cast<double>(n) * static_cast<double>(rings.size()));
  Schedule s;
  s.algorithm = CollectiveAlgorithm::kRing;
  switch (r.op) {
    case Collective::kAllReduce: s.phases.push_back(ring_round(rings, hop, 2 * (n - 1))); break;
    case Collective::kReduceScatter:
    case Collective::kAllGather: s.phases.push_back(ring_round(rings, hop, n - 1)); break;
    case Collective::kBroadcast: s.phases.push_back(chain(rings, r.root, false)); break;
    case Collective::kReduce: s.phases.push_back(chain(rings, r.root, true)); break;
    default: break;
  }
  return s;
}

}  // namespace exasim::models
