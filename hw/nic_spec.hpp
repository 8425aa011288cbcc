#pragma once
// A network interface (InfiniBand, RoCE, Slingshot): per-direction bandwidth and latencies.
#include <string>
#include <vector>

#include "hw/config/node.hpp"

namespace exasim::hw {

struct NicSpec {
  std::string name;
  std::string kind;            // infiniband | roce | slingshot
  double bandwidth = 0;        // B/s per direction
  double latency = 0;          // s, one way NIC to NIC through one switch
  double switch_latency = 0;   // s, per additional switch hop
};

NicSpec nic_from_layers(const std::string& name, const std::vector<config::Node>& layers);

}  // namespace exasim::hw
