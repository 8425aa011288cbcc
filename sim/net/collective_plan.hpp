#pragma once
// A collective turned into what the network carries: the algorithm's schedule (models/collective)
// placed on the topology, every transfer a flow with its route, every round summarised by its
// step latency and by the load of its most loaded channel (or the longer time its flows take
// when they share channels max-min among themselves). The analytical backend costs a plan
// in closed form (PlannedOp::time); the flow backend runs its flows.
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/collective/collective.hpp"
#include "models/collective/schedule.hpp"
#include "sim/net/network_fabric.hpp"
#include "sim/net/network_options.hpp"
#include "sim/network_backend.hpp"

namespace exasim::sim {

models::Collective to_collective(CommKind k);

struct Flow {
  Vertex src = 0;
  Vertex dst = 0;
  double fraction = 0;  // of the op's bytes on the wire (wire factor included)
  std::span<const ChannelId> route;
  double latency = 0;   // of the route, s
};

// A channel's part in a round: its flows start moving after `latency` (the shortest route among
// them) and it needs `seconds_per_byte` x the op's bytes to carry them.
struct ChannelLine {
  double latency = 0;
  double seconds_per_byte = 0;
  double at(double bytes) const { return latency + seconds_per_byte * bytes; }
};

struct FlowPhase {
  std::vector<Flow> flows;  // one round; all at once
  int repeat = 1;
  int latency_steps = 1;
  bool crosses_nodes = false;   // its step overhead is the network's
  double max_latency = 0;       // slowest route of the round
  double peers = 1;             // direct rounds: the peers each member sends to at once (phase_fill)
  // One round, Simple protocol: max over channels of load / capacity, or the round's max-min
  // sharing time per byte where that is longer.
  double seconds_per_byte = 0;
  // The round's transfer time as a function of the op's bytes: the upper envelope of its
  // channels' lines and its max-min line (only the few that are ever the maximum are kept).
  std::vector<ChannelLine> envelope;
  double transfer(double bytes) const;
};

struct PlannedOp {
  models::CollectiveAlgorithm algorithm = models::CollectiveAlgorithm::kRing;
  std::vector<FlowPhase> phases;
  bool ll_allowed = true;       // NVLS runs the Simple protocol only
  // send/recv: NCCL's p2p path, one transfer with its own launch overhead and no algorithm
  // steps (Simple protocol only).
  bool p2p = false;
  double intra_steps = 0;       // steps inside nodes (software overhead each)
  double inter_steps = 0;       // steps across the network
  std::uint64_t flows = 0;      // flows one run of the op starts
  bool empty() const { return phases.empty(); }
  // Launch, step latencies and bandwidth term of `bytes` with protocol `p`.
  double time(double bytes, models::Protocol p, const models::CollectiveParams& params) const;
  double launch(const models::CollectiveParams& params) const {
    return p2p ? params.p2p_launch_overhead_s : params.launch_overhead_s;
  }
  // What a call pays before its first round with protocol p: the launch, and the protocol's
  // base latency (CollectiveParams::base_latency; p2p has none of its own).
  double start(models::Protocol p, const models::CollectiveParams& params) const {
    return launch(params) + (p2p ? 0 : params.base_latency(p));
  }
};

// What an op runs: an algorithm's plan, the protocol, and the time that takes alone.
struct PlanChoice {
  const PlannedOp* plan = nullptr;
  models::Protocol protocol = models::Protocol::kSimple;
  double time_s = 0;
};

// Seconds between the end of a round and the start of the next round's flows with protocol p:
// the software overhead of every step, and the route latency of all steps but the one the
// flows pay themselves.
double round_delay(const PlannedOp& plan, const FlowPhase& phase, models::Protocol p,
                   const models::CollectiveParams& params);
// What a phase of an op of `bytes` takes beyond its rounds with protocol p, once: its pipeline's
// fill and drain, pipeline_fill_rounds x one peer's share of a round, uncontended
// (CollectiveParams::pipeline_fill_rounds).
double phase_fill(const FlowPhase& phase, models::Protocol p, double bytes, const models::CollectiveParams& params);
// Bytes on the wire per byte of payload with protocol p: the inverse of the rate it reaches
// (models::CollectiveParams::protocol_efficiency).
double wire_factor(models::Protocol p, const models::CollectiveParams& params);

class CollectivePlanner {
 public:
  CollectivePlanner(NetworkFabric& fabric, NetworkOptions options);

  // What `op` runs: the algorithm the options name for its kind (when it can run this group),
  // else the fastest candidate at op.bytes, with the faster protocol. Plans are cached per
  // group; the pointer stays valid for the planner's life.
  PlanChoice choose(const CommOp& op);
  // The plan with a given algorithm; throws ConfigError when it cannot run this group.
  const PlannedOp& plan(const CommOp& op, models::CollectiveAlgorithm algorithm);
  // The faster protocol for `plan` at `bytes`.
  PlanChoice best_protocol(const PlannedOp& plan, double bytes) const;
  // The algorithms the automatic choice compares for `op`.
  std::vector<models::CollectiveAlgorithm> candidates(const CommOp& op);

  NetworkFabric& fabric() { return fabric_; }
  const NetworkOptions& options() const { return options_; }

 private:
  struct Group {
    models::GroupLayout layout;
    std::vector<std::vector<std::uint32_t>> copies;  // the op's ranks first, then symmetric copies
    std::vector<models::CollectiveAlgorithm> candidates;
    std::map<models::CollectiveAlgorithm, PlannedOp> plans;
  };
  Group& group(const CommOp& op);
  const PlannedOp& plan_in(Group& g, const CommOp& op, models::CollectiveAlgorithm a);
  PlannedOp build(const Group& g, const CommOp& op, models::CollectiveAlgorithm a);
  void place_phase(const Group& g, const models::Phase& phase, FlowPhase& out);
  std::vector<std::vector<std::uint32_t>> copies_of(const std::vector<std::uint32_t>& ranks) const;

  NetworkFabric& fabric_;
  NetworkOptions options_;
  std::unordered_map<std::string, std::unique_ptr<Group>> groups_;
  std::string key_;                 // scratch: the key of the last lookup
  std::vector<double> load_;        // scratch: bytes per channel of one round (per op byte)
  std::vector<double> first_latency_;  // scratch: shortest route latency among a channel's flows
  std::vector<ChannelId> touched_;  // scratch: channels with load
};

}  // namespace exasim::sim
