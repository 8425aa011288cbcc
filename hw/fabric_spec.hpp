#pragma once
// An intra-node GPU fabric (NVSwitch, PCIe switch tree, xGMI mesh, NVL72 rack domain).
#include <string>
#include <vector>

#include "hw/config/node.hpp"

namespace exasim::hw {

struct FabricSpec {
  std::string name;
  std::string kind;              // nvswitch | pcie | xgmi
  std::string link;              // link catalog name
  double bandwidth = 0;          // B/s per GPU per direction into the fabric
  double latency = 0;            // s, GPU-to-GPU one way
  int max_gpus = 0;              // GPUs in one fabric domain
  bool in_switch_reduction = false;  // NVLS / NVLink SHARP
};

FabricSpec fabric_from_layers(const std::string& name, const std::vector<config::Node>& layers);

}  // namespace exasim::hw
