#pragma once
// Where checkpoints go: a shared storage system's aggregate write and read bandwidth, and what one
// node reaches of it (its storage NICs). configs/hw/storage.yaml.
#include <string>
#include <vector>

#include "hw/config/node.hpp"

namespace exasim::hw {

struct StorageSpec {
  std::string name;
  std::string kind;            // parallel-fs | object | distributed-fs
  double write_bandwidth = 0;  // B/s, the whole system, sustained
  double read_bandwidth = 0;   // B/s, the whole system, sustained
  double node_bandwidth = 0;   // B/s one client node reaches, per direction
};

StorageSpec storage_from_layers(const std::string& name, const std::vector<config::Node>& layers);

}  // namespace exasim::hw
