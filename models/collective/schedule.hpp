#pragma once
// A collective written as phases of point-to-point transfers between group members. The network
// backends cost a schedule (analytical: per round, latency plus the bytes of the most loaded link
// over its bandwidth) or run it (flow: each round's transfers as concurrent flows).
#include <unordered_map>
#include <vector>

#include "models/collective/collective.hpp"

namespace exasim::models {

// A transfer endpoint is a group member (>= 0) or the in-switch reduction unit (NVLS) of the
// node that holds member m, written switch_of(m).
constexpr int switch_of(int member) { return -1 - member; }
constexpr bool is_switch(int endpoint) { return endpoint < 0; }
constexpr int member_of_switch(int endpoint) { return -1 - endpoint; }

struct Transfer {
  int src = 0;
  int dst = 0;
  double fraction = 0;  // of the op's bytes
};

// `repeat` identical rounds run one after the other (the steps of a ring); all transfers of a
// round run at once. A pipelined chain moves its data once but pays one step latency per hop:
// latency_steps per round. wire_factor scales bytes on the wire (NVLS multimem packets).
struct Phase {
  std::vector<Transfer> transfers;
  int repeat = 1;
  int latency_steps = 1;
  double wire_factor = 1;
};

struct Schedule {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  std::vector<Phase> phases;
  // Rounds the flow backend runs (sum of repeats) and step latencies the schedule pays.
  long rounds() const;
  long latency_steps() const;
};

// Collects the transfers of one phase, merging those between the same endpoints (channels of a
// ring that share an NVLink hop become one flow). Self and empty transfers are dropped.
class PhaseBuilder {
 public:
  void add(int src, int dst, double fraction);
  Phase take(int repeat = 1, int latency_steps = 1, double wire_factor = 1);

 private:
  Phase phase_;
  std::unordered_map<long long, std::size_t> index_;
};

}  // namespace exasim::models
