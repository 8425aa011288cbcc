#pragma once
// Clusters written the way scenarios write them (cluster: {...}), for the topology tests.
#include <string>

#include "hw/catalog.hpp"
#include "topologies/routing.hpp"
#include "topologies/topology.hpp"
#include "workloads/scenario/scenario.hpp"

namespace exasim::testing {

inline const hw::Catalog& test_catalog() {
  static const hw::Catalog c = hw::Catalog::load(hw::default_configs_dir());
  return c;
}

inline topologies::Cluster cluster_from(const std::string& yaml) {
  return workloads::read_cluster(config::load_string(yaml, "test.yaml"), test_catalog());
}

// Counts of vertices of one kind (and tier, for switches; -1: any tier).
inline int count(const topologies::Topology& t, topologies::VertexKind k, int tier = -1) {
  int n = 0;
  for (std::size_t v = 0; v < t.vertex_count(); ++v)
    if (t.vertex(v).kind == k && (tier < 0 || t.vertex(v).tier == tier)) ++n;
  return n;
}

inline int links_of(const topologies::Topology& t, topologies::LinkKind k) {
  int n = 0;
  for (std::uint32_t id = 0; id < t.link_count(); ++id) n += t.link(id).kind == k ? 1 : 0;
  return n;
}

// The vertices a route passes, source first.
inline std::vector<topologies::Vertex> path_of(const topologies::Topology& t, topologies::Vertex src,
                                               std::span<const topologies::ChannelId> route) {
  std::vector<topologies::Vertex> out{src};
  for (topologies::ChannelId c : route) {
    const auto [a, b] = t.ends(t.link_of(c));
    out.push_back(out.back() == a ? b : a);
  }
  return out;
}

}  // namespace exasim::testing
