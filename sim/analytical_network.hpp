#pragma once
// The analytical network backend: contention-free alpha-beta costs of each collective over the
// cluster's node fabric and NICs (models/collective). Results are cached per op object: the
// ops vector handed to the engine outlives a run and lowering shares one op between equal tasks.
#include <unordered_map>

#include "models/collective/collective_model.hpp"
#include "sim/network_backend.hpp"
#include "topologies/cluster.hpp"

namespace exasim::sim {

class AnalyticalNetwork final : public NetworkBackend {
 public:
  AnalyticalNetwork(const topologies::Cluster& cluster, const models::CollectiveParams& params,
                    models::CollectiveAlgorithm algorithm = models::CollectiveAlgorithm::kAuto);
  Time duration(const CommOp& op, Time now) override;
  // The full cost (algorithm, bandwidths) of an op, for reports and `exasim collective`.
  models::CollectiveCost cost(const CommOp& op) const;
  // Shape of a rank set on the cluster: ranks, and the most ranks it has on one node.
  models::GroupShape shape_of(const std::vector<std::uint32_t>& ranks) const;
  models::GroupLinks links() const;

 private:
  const topologies::Cluster& cluster_;
  models::CollectiveParams params_;
  models::CollectiveAlgorithm algorithm_;
  std::unordered_map<const CommOp*, Time> cache_;
};

models::Collective to_collective(CommKind k);

}  // namespace exasim::sim
