// In-switch reduction (NVLink SHARP, "NVLS"): members push their data into the NVSwitch, which
// reduces it, and pull (multicast) the result back, so each NVLink direction carries the buffer
// once instead of 2(n-1)/n times. Multimem packets carry less payload per wire byte than plain
// NVLink writes: the phase's wire factor is intra_efficiency / nvls_efficiency. Across nodes,
// NVLS runs inside each node around a hierarchical inter-node ring on 1/k shards.
#include "models/collective/algorithm.hpp"

namespace exasim::models {

namespace {

// Every member sends `up` of the buffer into its node's switch and receives `down` back.
Phase through_switch(const std::vector<std::vector<int>>& nodes, double up, double down, double wire) {
  PhaseBuilder b;
  for (const auto& members : nodes) {
    for (int m : members) {
      b.add(m, switch_of(m), up);
      b.add(switch_of(m), m, down);
    }
  }
  return b.take(1, 2, wire);
}

}  // namespace

bool nvls_supports(Collective op, const GroupLayout& g) {
  if (!g.switch_reduction || g.size() < 2) return false;
  if (op != Collective::kAllReduce && op != Collective::kReduceScatter && op != Collective::kAllGather) return false;
  const auto nodes = g.by_node();
  return nodes.size() == 1 || (g.uniform() && nodes[0].size() >= 2);
}

Schedule nvls_schedule(const ScheduleRequest& r) {
  const auto nodes = r.layout->by_node();
  const double k = static_cast<double>(nodes[0].size());
  const double wire = r.params.intra_efficiency / r.params.nvls_efficiency;
  Schedule s;
  s.algorithm = CollectiveAlgorithm::kNvls;
  if (nodes.size() == 1) {
    const double up = r.op == Collective::kAllGather ? 1 / k : 1;
    const double down = r.op == Collective::kReduceScatter ? 1 / k : 1;
    s.phases.push_back(through_switch(nodes, up, down, wire));
    return s;
  }
  if (r.op != Collective::kAllGather) s.phases.push_back(through_switch(nodes, 1, 1 / k, wire));
  s.phases.push_back(hierarchical_inter(r.op, nodes));
  if (r.op != Collective::kReduceScatter) s.phases.push_back(through_switch(nodes, 1 / k, 1, wire));
  return s;
}

}  // namespace exasim::models
