#pragma once
// The inter-node topologies by name (cluster.inter_node.topology), with help text.
#include <string_view>
#include <vector>

#include "topologies/network_builders.hpp"

namespace exasim::topologies {

struct TopologyInfo {
  std::string_view name;
  std::string_view help;
  std::vector<Vertex> (*build)(const NetworkContext& ctx);
};

const std::vector<TopologyInfo>& topology_table();
// Throws ConfigError listing the names when `name` is unknown.
const TopologyInfo& topology_info(std::string_view name);

}  // namespace exasim::topologies
