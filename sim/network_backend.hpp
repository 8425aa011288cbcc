#pragma once
// How the engine learns when a communication task ends. Two kinds of backend sit behind this
// interface (sim/net/network_registry.hpp names them):
//  - contention-free (analytical): duration() answers at once when the task starts;
//  - link-sharing (flow): concurrent operations share links, so an end time is known only as
//    the network advances. The engine then runs its loop inside run(), hands each operation to
//    start(), and moves time with advance(), which stops at the next operation to finish or at
//    the engine's own next event, whichever comes first.
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "sim/exec_graph.hpp"

namespace exasim::sim {

enum class CommKind : std::uint8_t { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSendRecv, kReduce };

// One communication: what, how many bytes, and the ranks (global GPU indices) involved.
// bytes is the whole buffer (see models/collective/collective_model.hpp); for kSendRecv,
// ranks = {source, destination}. Lowering code shares one CommOp between identical tasks.
struct CommOp {
  CommOp(CommKind k = CommKind::kAllReduce, double b = 0, std::vector<std::uint32_t> r = {},
         std::vector<double> s = {}, std::uint32_t root_member = 0)
      : kind(k), bytes(b), ranks(std::move(r)), split(std::move(s)), root(root_member) {}

  CommKind kind = CommKind::kAllReduce;
  double bytes = 0;
  std::vector<std::uint32_t> ranks;
  // all-to-all(v): bytes member i sends member j = split[i * n + j] * bytes; empty = even.
  std::vector<double> split;
  std::uint32_t root = 0;  // broadcast / reduce: the root's index in `ranks`
};

inline constexpr Time kNever = std::numeric_limits<Time>::infinity();

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  // Duration of `op` if it starts at `now` with nothing else on the network.
  virtual Time duration(const CommOp& op, Time now) = 0;
  // Forgets what it remembers by op object (the next run's ops are new objects, possibly at the
  // same addresses); what it learnt of the topology and the groups stays.
  virtual void forget_ops() {}

  // Link-sharing backends return true and implement the calls below; the engine then uses
  // them instead of duration().
  virtual bool shares_links() const { return false; }
  // Every op the run may start, before run() (a flow backend builds its routes from them).
  virtual void prepare(const std::vector<CommOp>& /*ops*/) {}
  // Runs `loop` (the engine's event loop) where start()/advance() may be called.
  virtual void run(const std::function<void()>& loop) { loop(); }
  // Starts `op` at `now`; `token` names it in advance()'s report.
  virtual void start(const CommOp& /*op*/, std::uint32_t /*token*/, Time /*now*/) {}
  // Moves the network to the earliest of `limit` (may be kNever) and the next end of a started
  // op. Appends the tokens of ops that ended to `done` and returns the time reached.
  virtual Time advance(Time limit, std::vector<std::uint32_t>& /*done*/) { return limit; }
  // Whether a started op has not ended yet.
  virtual bool busy() const { return false; }
};

}  // namespace exasim::sim
