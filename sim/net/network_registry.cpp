#include "sim/net/network_registry.hpp"

#include <string>

#include "hw/error.hpp"
#include "sim/net/analytical_network.hpp"
#include "sim/net/flow_network.hpp"

namespace exasim::sim {

namespace {

template <class Backend>
std::unique_ptr<NetworkBackend> make(const topologies::Cluster& c, const models::CollectiveParams& p,
                                     const NetworkOptions& o) {
  return std::make_unique<Backend>(c, p, o);
}

}  // namespace

const std::vector<NetworkBackendInfo>& network_backend_table() {
  static const std::vector<NetworkBackendInfo> table = {
      {"analytical", "contention-free: per round, step latency + bytes of the most loaded link over its bandwidth (or the op's own max-min sharing)",
       make<AnalyticalNetwork>},
      {"flow", "SimGrid flow level: every flow in flight shares links by max-min (LV08 or CM02); congestion appears",
       make<FlowNetwork>},
  };
  return table;
}

std::unique_ptr<NetworkBackend> make_network_backend(const topologies::Cluster& cluster,
                                                     const models::CollectiveParams& params,
                                                     const NetworkOptions& options) {
  std::string names;
  for (const NetworkBackendInfo& info : network_backend_table()) {
    if (info.name == options.backend) return info.make(cluster, params, options);
    names += (names.empty() ? "" : ", ") + std::string(info.name);
  }
  throw ConfigError("unknown network fidelity '" + options.backend + "'", {}, "use one of " + names);
}

}  // namespace exasim::sim
