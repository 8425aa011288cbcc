#pragma once
// Collective algorithms as a name -> builder table: each turns an operation on a group layout
// into a Schedule of transfers. `exasim collective --help` lists them with their help text.
#include <string_view>
#include <vector>

#include "models/collective/collective_params.hpp"
#include "models/collective/group_layout.hpp"
#include "models/collective/schedule.hpp"

namespace exasim::models {

struct ScheduleRequest {
  Collective op = Collective::kAllReduce;
  const GroupLayout* layout = nullptr;
  CollectiveParams params;
  // all-to-all(v): bytes member i sends member j, as fractions of the op's bytes, row-major
  // n x n; empty means the even split of all-to-all (1/n of the buffer to each member).
  std::vector<double> split;
  int root = 0;  // broadcast and reduce: the member that holds (receives) the data
};

struct AlgorithmInfo {
  CollectiveAlgorithm id;
  std::string_view help;
  bool (*supports)(Collective op, const GroupLayout& g);
  Schedule (*build)(const ScheduleRequest& r);
};

// Every algorithm but kAuto, in a fixed order.
const std::vector<AlgorithmInfo>& algorithm_table();
const AlgorithmInfo& algorithm_info(CollectiveAlgorithm a);  // a != kAuto
bool algorithm_supports(CollectiveAlgorithm a, Collective op, const GroupLayout& g);
// Throws ConfigError when `a` cannot run `op` on this group.
Schedule build_schedule(CollectiveAlgorithm a, const ScheduleRequest& r);

// What the automatic choice compares, as NCCL's tuner does: ring, tree and NVLS for all-reduce,
// ring for the rest, plus, inside one node of a mesh fabric, the one-shot direct exchange that
// uses every link at once (as RCCL's rings do on xGMI). Hierarchical and halving-doubling are not NCCL
// algorithms: they run only when asked for. The caller picks the fastest by cost.
std::vector<CollectiveAlgorithm> auto_candidates(Collective op, const GroupLayout& g);

// Per-algorithm support predicates and builders (one file each).
bool ring_supports(Collective op, const GroupLayout& g);
Schedule ring_schedule(const ScheduleRequest& r);
bool tree_supports(Collective op, const GroupLayout& g);
Schedule tree_schedule(const ScheduleRequest& r);
bool halving_doubling_supports(Collective op, const GroupLayout& g);
Schedule halving_doubling_schedule(const ScheduleRequest& r);
bool direct_supports(Collective op, const GroupLayout& g);
Schedule direct_schedule(const ScheduleRequest& r);
bool hierarchical_supports(Collective op, const GroupLayout& g);
Schedule hierarchical_schedule(const ScheduleRequest& r);
bool nvls_supports(Collective op, const GroupLayout& g);
Schedule nvls_schedule(const ScheduleRequest& r);

// Ring building blocks shared by ring, hierarchical and NVLS: rings (member orders) that visit
// `members` in order, one per channel; a round of every ring's hops, `fraction` per ring.
Phase ring_round(const std::vector<std::vector<int>>& rings, double fraction, int repeat);
// The inter-node part of the hierarchical algorithms: one ring per rail on shards of 1/k.
Phase hierarchical_inter(Collective op, const std::vector<std::vector<int>>& nodes);

}  // namespace exasim::models
