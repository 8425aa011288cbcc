#pragma once
// The discrete-event engine: runs an ExecGraph to completion and returns its Timeline.
// Events are task completions ordered by (time, sequence number), so equal inputs give equal
// outputs bit for bit. With a contention-free network backend a comm task's duration is known
// when it starts; with a link-sharing one (flow level) the engine runs inside the backend and
// takes, at each step, the earlier of its next completion and the network's next finished op.
#include <cstdint>
#include <vector>

#include "sim/exec_graph.hpp"
#include "sim/network_backend.hpp"
#include "sim/timeline.hpp"

namespace exasim::sim {

struct EngineStats {
  std::uint64_t events = 0;  // events processed (task starts + completions)
};

class Engine {
 public:
  // comm_ops: the ops that tasks' comm_op indices refer to; backend may be null when no task
  // has a comm_op.
  Engine(const ExecGraph& graph, const std::vector<CommOp>* comm_ops = nullptr,
         NetworkBackend* backend = nullptr);
  // With a link-sharing backend: tasks of one comm op that start at the same instant are one
  // operation on the network (the members of a collective when every rank is simulated; they
  // meet at a barrier first), started once and finished together. Off by default.
  void join_identical_collectives(bool on) { join_ = on; }
  // Compute slowed by communication: while a collective or send/recv runs on a device it holds
  // some of that device's SMs (NCCL runs one thread block per channel), so the device's compute
  // tasks progress at 1 - (sum of the running ops' shares) of their rate meanwhile, the sum capped
  // at kMaxCommComputeShare. share_by_comm_op[i]: the fraction of the device op i takes, in [0, 1);
  // ops past its end take none. Empty (the default): compute never slows.
  void slow_compute_during_comm(std::vector<double> share_by_comm_op);
  static constexpr double kMaxCommComputeShare = 0.75;
  // Runs to completion. Throws std::runtime_error naming the stuck tasks if the graph deadlocks
  // (a dependency cycle, or a dependency on a task later in the same stream).
  Timeline run();
  const EngineStats& stats() const { return stats_; }

 private:
  const ExecGraph& graph_;
  const std::vector<CommOp>* comm_ops_;
  NetworkBackend* backend_;
  bool join_ = false;
  std::vector<double> comm_share_;
  EngineStats stats_;
};

}  // namespace exasim::sim
