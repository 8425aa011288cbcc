#pragma once
// The flow-level network backend: the topology exported to a SimGrid 3.32 platform (one host per
// flow endpoint, one link per directed channel used, one route per endpoint pair), each
// collective run round by round as point-to-point flows, and every flow in flight, whatever op,
// stream or job it belongs to, sharing links by SimGrid's max-min model. Each round starts after
// its step latencies (the same ones the analytical backend charges), its flows pay their route
// latency inside SimGrid, and the next round starts when the last flow of this one ends.
//
// SimGrid keeps one engine per process at a time; each run() creates its own and releases it.
// SimGrid's configuration is process-wide, so the model class (CM02's max-min solver) is set
// once; LV08 and CM02 differ only by the sharing weight (weight-S), set per run. Both keep
// SimGrid's correction factors at 1: the calibrated efficiencies and latencies already hold
// the protocol overheads that LV08's TCP factors (latency x13.01, bandwidth x0.97) stand for.
#include <cstdint>
#include <memory>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "sim/net/collective_plan.hpp"
#include "sim/net/network_options.hpp"
#include "sim/network_backend.hpp"
#include "topologies/cluster.hpp"

namespace exasim::sim {

struct FlowStats {
  std::uint64_t ops = 0;     // collectives run
  std::uint64_t rounds = 0;  // schedule rounds run in SimGrid
  std::uint64_t flows = 0;   // point-to-point flows simulated in SimGrid
  // Rounds (and their flows) credited without re-running them: identical rounds of an op that
  // has the network to itself (see NetworkOptions::fast_forward).
  std::uint64_t rounds_fast_forwarded = 0;
  std::uint64_t flows_fast_forwarded = 0;
};

class FlowNetwork final : public NetworkBackend {
 public:
  FlowNetwork(const topologies::Cluster& cluster, const models::CollectiveParams& params, NetworkOptions options);
  ~FlowNetwork() override;

  // Runs `op` alone on the network (its own SimGrid run) and returns how long it took.
  Time duration(const CommOp& op, Time now) override;
  models::CollectiveCost cost(const CommOp& op);

  bool shares_links() const override { return true; }
  void prepare(const std::vector<CommOp>& ops) override;
  void run(const std::function<void()>& loop) override;
  void start(const CommOp& op, std::uint32_t token, Time now) override;
  Time advance(Time limit, std::vector<std::uint32_t>& done) override;
  bool busy() const override;

  const FlowStats& stats() const;
  CollectivePlanner& planner();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace exasim::sim
