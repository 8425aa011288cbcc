#include "topologies/topology_registry.hpp"

#include <string>

#include "hw/error.hpp"

namespace exasim::topologies {

namespace {

// The common case: create the NICs as `spec` says, then build the switches over them.
template <NetworkBuilder Build>
std::vector<Vertex> with_nics(const NetworkContext& ctx) {
  const auto nodes = attach_nics(ctx.t, ctx.cluster, ctx.spec, ctx.first, ctx.count, ctx.nic_side);
  return Build(ctx.t, ctx.spec, nodes, ctx.prefix);
}

}  // namespace

const std::vector<TopologyInfo>& topology_table() {
  static const std::vector<TopologyInfo> table = {
      {"fat-tree", "2- or 3-tier folded Clos; a node's NICs share a leaf; oversubscription at the leaf tier",
       with_nics<build_fat_tree>},
      {"rail-optimized", "NIC i of every node on the leaves of rail i, spines above; same-rail traffic stays on its rail",
       with_nics<build_rail_optimized>},
      {"single-switch", "one non-blocking switch for every NIC", with_nics<build_single_switch>},
      {"dragonfly", "groups of all-to-all routers joined by global links (Slingshot-like); minimal routing",
       with_nics<build_dragonfly>},
      {"torus", "2D/3D torus of per-node routers with wrap-around links", with_nics<build_torus>},
      {"multi-cluster", "several clusters, each with its own network, joined by a slower link", build_multi_cluster},
  };
  return table;
}

const TopologyInfo& topology_info(std::string_view name) {
  std::string names;
  for (const TopologyInfo& info : topology_table()) {
    if (info.name == name) return info;
    names += (names.empty() ? "" : ", ") + std::string(info.name);
  }
  throw ConfigError("unknown inter-node topology '" + std::string(name) + "'", {}, "use one of " + names);
}

std::vector<Vertex> build_network(const NetworkContext& ctx) { return topology_info(ctx.spec.topology).build(ctx); }

}  // namespace exasim::topologies
