// Routing: shortest paths that never pass through a GPU, equal-cost choices spread by destination
// (D-mod-k), the same route every time.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "topology_fixture.hpp"

using namespace exasim;
using namespace exasim::topologies;
using exasim::testing::cluster_from;
using exasim::testing::path_of;

namespace {

Cluster fat_tree_16() {
  return cluster_from(
      "{node: dgx-a100, nodes: 16, inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 8, switch_radix: 32}}");
}

}  // namespace

TEST_CASE("routes are shortest, pass no GPU, and are the same each time") {
  const Cluster c = fat_tree_16();
  const Topology t = build_topology(c);
  Router r(t);
  for (int dst : {1, 8, 17, 127}) {
    const auto route = r.route(t.gpu(0), t.gpu(dst));
    const auto path = path_of(t, t.gpu(0), route);
    CHECK(path.back() == t.gpu(dst));
    for (std::size_t i = 1; i + 1 < path.size(); ++i) CHECK(t.vertex(path[i]).kind != VertexKind::kGpu);
    const auto again = r.route(t.gpu(0), t.gpu(dst));
    CHECK(again.data() == route.data());  // cached: the very same storage
    Router fresh(t);
    const auto other = fresh.route(t.gpu(0), t.gpu(dst));
    CHECK(std::vector<ChannelId>(other.begin(), other.end()) == std::vector<ChannelId>(route.begin(), route.end()));
  }
}

TEST_CASE("ECMP spreads the destinations of one leaf evenly over the spines (D-mod-k)") {
  // Leaf 0 holds nodes 0-1. Sixteen flows from node 0's GPUs to sixteen consecutive ranks on
  // other leaves: 4 spines, so 4 flows each.
  const Cluster c = fat_tree_16();
  const Topology t = build_topology(c);
  Router r(t);
  std::map<Vertex, int> per_spine;
  for (int i = 0; i < 16; ++i) {
    const auto path = path_of(t, t.gpu(i % 8), r.route(t.gpu(i % 8), t.gpu(32 + i)));
    for (Vertex v : path)
      if (t.vertex(v).kind == VertexKind::kSwitch && t.vertex(v).tier == 2) ++per_spine[v];
  }
  CHECK(per_spine.size() == 4);
  for (const auto& [spine, n] : per_spine) CHECK(n == 4);
}

TEST_CASE("a GPU's traffic leaves through its own NIC rail") {
  const Cluster c = fat_tree_16();
  const Topology t = build_topology(c);
  Router r(t);
  std::set<Vertex> nics;
  for (int l = 0; l < 8; ++l) {
    const auto path = path_of(t, t.gpu(l), r.route(t.gpu(l), t.gpu(64 + l)));
    CHECK(t.vertex(path[1]).kind == VertexKind::kNic);
    nics.insert(path[1]);
  }
  CHECK(nics.size() == 8);
}

TEST_CASE("intra-node routes stay on the node fabric when GPUs share a NIC") {
  // One NIC for eight GPUs: GPU-NIC-GPU would be as short as GPU-NVSwitch-GPU, but is not a path.
  const Cluster c = cluster_from("{node: dgx-a100, nodes: 2, inter_node: {topology: single-switch, nic: ib-hdr-200, nics_per_node: 1}}");
  const Topology t = build_topology(c);
  Router r(t);
  for (int b = 1; b < 8; ++b) {
    const auto path = path_of(t, t.gpu(0), r.route(t.gpu(0), t.gpu(b)));
    REQUIRE(path.size() == 3);
    CHECK(t.vertex(path[1]).kind == VertexKind::kNvSwitch);
  }
  CHECK(r.route(t.gpu(0), t.gpu(8)).size() == 4);  // across: GPU, NIC, switch, NIC, GPU
}
