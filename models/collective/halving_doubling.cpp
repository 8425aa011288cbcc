// Recursive halving-doubling (Rabenseifner): reduce-scatter by pairwise exchanges at distance
// 1, 2, 4, ... that halve the data each round, then all-gather by the same exchanges in
// reverse. Members are taken node by node, so the large early exchanges stay inside a node.
// A group that is not a power of two first folds its extra members onto the others and
// unfolds them at the end (all-reduce only).
#include "models/collective/algorithm.hpp"

namespace exasim::models {

namespace {

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

Phase exchange(const std::vector<int>& members, int p, int distance, double fraction) {
  PhaseBuilder b;
  for (int i = 0; i < p; ++i) b.add(members[i], members[i ^ distance], fraction);
  return b.take();
}

Phase fold(const std::vector<int>& members, int p, bool in) {
  PhaseBuilder b;
  for (int i = p; i < static_cast<int>(members.size()); ++i)
    in ? b.add(members[i], members[i - p], 1.0) : b.add(members[i - p], members[i], 1.0);
  return b.take();
}

}  // namespace

bool halving_doubling_supports(Collective op, const GroupLayout& g) {
  if (g.size() < 2) return false;
  if (op == Collective::kAllReduce) return true;
  return (op == Collective::kReduceScatter || op == Collective::kAllGather) && power_of_two(g.size());
}

Schedule halving_doubling_schedule(const ScheduleRequest& r) {
  const std::vector<int> members = r.layout->node_major();
  int p = 1;
  while (p * 2 <= static_cast<int>(members.size())) p *= 2;
  Schedule s;
  s.algorithm = CollectiveAlgorithm::kHalvingDoubling;
  const bool reduce = r.op != Collective::kAllGather;
  const bool gather = r.op != Collective::kReduceScatter;
  if (p < static_cast<int>(members.size())) s.phases.push_back(fold(members, p, true));
  if (reduce) {
    double f = 0.5;
    for (int d = 1; d < p; d *= 2, f /= 2) s.phases.push_back(exchange(members, p, d, f));
  }
  if (gather) {
    std::vector<Phase> rounds;
    double f = 0.5;
    for (int d = 1; d < p; d *= 2, f /= 2) rounds.push_back(exchange(members, p, d, f));
    for (auto it = rounds.rbegin(); it != rounds.rend(); ++it) s.phases.push_back(std::move(*it));
  }
  if (p < static_cast<int>(members.size())) s.phases.push_back(fold(members, p, false));
  return s;
}

}  // namespace exasim::models
