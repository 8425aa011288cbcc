#pragma once
// The network backends by name (simulation.fidelity, `--fidelity`), with help text.
#include <memory>
#include <string_view>
#include <vector>

#include "models/collective/collective_params.hpp"
#include "sim/net/network_options.hpp"
#include "sim/network_backend.hpp"
#include "topologies/cluster.hpp"

namespace exasim::sim {

struct NetworkBackendInfo {
  std::string_view name;
  std::string_view help;
  std::unique_ptr<NetworkBackend> (*make)(const topologies::Cluster& cluster, const models::CollectiveParams& params,
                                          const NetworkOptions& options);
};

const std::vector<NetworkBackendInfo>& network_backend_table();
// The backend options.backend names; throws ConfigError listing the names when unknown.
std::unique_ptr<NetworkBackend> make_network_backend(const topologies::Cluster& cluster,
                                                     const models::CollectiveParams& params,
                                                     const NetworkOptions& options);

}  // namespace exasim::sim
