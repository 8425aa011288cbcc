#pragma once
// How the engine learns the duration of a communication task. The analytical backend answers with
// a closed form; a flow-level backend (SimGrid) shares links between concurrent flows.
#include <cstdint>
#include <vector>

#include "sim/exec_graph.hpp"

namespace exasim::sim {

enum class CommKind : std::uint8_t { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSendRecv };

// One communication: what, how many bytes, and the ranks (global GPU indices) involved.
// bytes is the whole buffer (see models/collective/collective_model.hpp); for kSendRecv,
// ranks = {source, destination}. Lowering code shares one CommOp between identical tasks.
struct CommOp {
  CommKind kind = CommKind::kAllReduce;
  double bytes = 0;
  std::vector<std::uint32_t> ranks;
};

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  // Duration of `op` if it starts at `now` with nothing else on the network.
  virtual Time duration(const CommOp& op, Time now) = 0;
};

}  // namespace exasim::sim
