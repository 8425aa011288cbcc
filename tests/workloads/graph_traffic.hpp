#pragma once
// Training tests that count what a lowered graph does: per task label, how many collectives or
// sends carry it, the bytes of one and the size of its group; or the bytes and FLOPs of all its tasks.
#include <map>
#include <string>

#include "workloads/training/training_graph.hpp"

namespace exasim::testing {

struct LabelTraffic {
  int count = 0;
  double bytes = 0;       // of one (the last seen)
  std::size_t group = 0;  // ranks of one
};

inline std::map<std::string, LabelTraffic> traffic_by_label(const workloads::TrainingGraph& g) {
  std::map<std::string, LabelTraffic> out;
  for (const auto& t : g.graph.tasks()) {
    if (t.comm_op == sim::kNone) continue;
    LabelTraffic& x = out[std::string(g.graph.label(t.label))];
    ++x.count;
    x.bytes = g.comm_ops[t.comm_op].bytes;
    x.group = g.comm_ops[t.comm_op].ranks.size();
  }
  return out;
}

// Per task label, the sum over its tasks of the bytes and FLOPs they carry (copies, host steps).
struct LabelTotals {
  double bytes = 0, flops = 0;
};

inline std::map<std::string, LabelTotals> totals_by_label(const workloads::TrainingGraph& g) {
  std::map<std::string, LabelTotals> out;
  for (const auto& t : g.graph.tasks()) {
    LabelTotals& x = out[std::string(g.graph.label(t.label))];
    x.bytes += t.bytes;
    x.flops += t.flops;
  }
  return out;
}

}  // namespace exasim::testing
