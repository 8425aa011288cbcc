#include "topologies/cluster.hpp"

#include <algorithm>

namespace exasim::topologies {

double Cluster::nic_bandwidth_per_gpu(int sharing) const {
  if (!inter) return 0;
  const int users = std::max(1, sharing);
  const double node_total = inter->nic.bandwidth * inter->nics_per_node / inter->oversubscription;
  // A GPU drives one NIC (its rail); several GPUs split the node's NICs.
  return std::min(inter->nic.bandwidth / inter->oversubscription, node_total / users);
}

}  // namespace exasim::topologies
