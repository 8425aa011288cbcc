#include "models/power/cluster_power.hpp"

#include <cmath>

namespace exasim::models {

ClusterPower cluster_power(const ClusterPowerInputs& in) {
  ClusterPower p;
  p.gpus_w = in.gpus * in.gpu_avg_w;
  p.nodes_other_w = in.nodes * in.node_other_w;
  p.switches_w = in.switch_port_gbps * kSwitchWattsPerGbps;
  p.it_w = p.gpus_w + p.nodes_other_w + p.switches_w;
  p.facility_w = p.it_w * in.pue;
  return p;
}

int servers_within_budget(double budget_w, const ServerProvision& server) {
  const double each = server.facility_w();
  if (each <= 0 || budget_w <= 0) return 0;
  return static_cast<int>(std::floor(budget_w / each * (1 + 1e-12)));
}

}  // namespace exasim::models
