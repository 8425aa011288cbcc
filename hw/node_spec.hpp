#pragma once
// A server (or rack domain): which GPUs, how they are connected inside, which NICs leave it.
#include <string>
#include <vector>

#include "hw/config/node.hpp"

namespace exasim::hw {

struct NodeSpec {
  std::string name;
  std::string gpu;            // GPU catalog name
  int gpus_per_node = 0;
  std::string fabric;         // fabric catalog name
  std::string nic;            // NIC catalog name
  int nics_per_node = 0;
  std::string cpu;            // CPU catalog name
  int cpus_per_node = 0;
  double host_memory_bytes = 0;
  std::string pcie;           // link catalog name
  double nvme_read_bandwidth = 0;   // B/s per node, the local NVMe drives together (0: not stated)
  double nvme_write_bandwidth = 0;  // B/s per node
  double power_other_w = 0;   // node power besides GPUs at load (CPUs, NICs, fans)
};

NodeSpec node_from_layers(const std::string& name, const std::vector<config::Node>& layers);

}  // namespace exasim::hw
