#pragma once
// A point-to-point link type (NVLink generation, PCIe x16 generation): per-direction bandwidth, latency.
#include <string>
#include <vector>

#include "hw/config/node.hpp"

namespace exasim::hw {

struct LinkSpec {
  std::string name;
  std::string kind;       // nvlink | pcie | xgmi
  double bandwidth = 0;   // B/s per direction
  double latency = 0;     // s, one way
};

LinkSpec link_from_layers(const std::string& name, const std::vector<config::Node>& layers);

}  // namespace exasim::hw
