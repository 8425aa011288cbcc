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

namespace {

// Reference: a breadth-first search over the whole graph from the destination (vertices a route
// may use only), then the same D-mod-k walk. The Router keeps distances for the network core
// only and derives the rest; its routes must be these, channel for channel.
std::vector<ChannelId> reference_route(const Topology& t, const Router& r, Vertex src, Vertex dst) {
  const Graph& g = t.graph();
  const bool in_node = g[src].node >= 0 && g[src].node == g[dst].node;
  constexpr int kFar = 1 << 30;
  std::vector<int> dist(t.vertex_count(), kFar);
  std::vector<Vertex> queue{dst};
  dist[dst] = 0;
  for (std::size_t q = 0; q < queue.size(); ++q) {
    for (auto [e, end] = boost::out_edges(queue[q], g); e != end; ++e) {
      const Vertex w = boost::target(*e, g);
      if (dist[w] == kFar && r.usable(w, dst, in_node)) dist[w] = dist[queue[q]] + 1, queue.push_back(w);
    }
  }
  std::uint64_t key = static_cast<std::uint64_t>(dst), stride = 1;
  for (int rank = 0; rank < t.gpu_count(); ++rank)
    if (t.gpu(rank) == dst) key = static_cast<std::uint64_t>(rank);
  std::vector<ChannelId> path;
  for (Vertex u = src; u != dst;) {
    std::vector<Graph::edge_descriptor> best;
    int nearest = kFar;
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      const Vertex v = boost::target(*e, g);
      if (!r.usable(v, dst, in_node) || dist[v] == kFar) continue;
      if (dist[v] < nearest) nearest = dist[v], best.clear();
      if (dist[v] == nearest) best.push_back(*e);
    }
    REQUIRE(!best.empty());
    const auto& e = best[best.size() == 1 ? 0 : (key / stride) % best.size()];
    stride *= best.size();
    path.push_back(t.channel(g[e].id, u));
    u = boost::target(e, g);
  }
  return path;
}

}  // namespace

TEST_CASE("routes equal those of a search over the whole graph, on every kind of fabric") {
  const char* clusters[] = {
      "{node: dgx-a100, nodes: 16, inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 8, switch_radix: 8}}",
      "{node: dgx-a100, nodes: 8, inter_node: {topology: rail-optimized, nic: ib-hdr-200, nics_per_node: 8, switch_radix: 16}}",
      "{node: dgx-a100, nodes: 6, inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 2, switch_radix: 8, "
      "oversubscription: 3}}",
      "{node: pcie-8gpu-server, nodes: 4, inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 2, switch_radix: 4}}",
      "{node: pcie-8gpu-server, nodes: 3, inter_node: {topology: single-switch, nic: ib-hdr-200, nics_per_node: 1}}",
      // PCIe servers whose NICs sit on different rails: nodes the network can cross (not sealed).
      "{node: pcie-8gpu-server, nodes: 4, inter_node: {topology: rail-optimized, nic: ib-hdr-200, nics_per_node: 2, "
      "switch_radix: 8}}",
      "{node: pcie-8gpu-server, nodes: 4, inter_node: {topology: rail-optimized, switch_radix: 8, nic_groups: [{nodes: 2, "
      "nic: ib-hdr-200, nics_per_node: 1}, {nodes: 2, nic: ib-hdr-200, nics_per_node: 2}]}}",
      "{node: hgx-mi300x, nodes: 4, inter_node: {topology: fat-tree, nic: ib-ndr-400, nics_per_node: 8, switch_radix: 16}}",
      "{gpu: A100-SXM4-80GB, gpus_per_node: 4, nodes: 8, inter_node: {topology: dragonfly, nic: slingshot-11, "
      "nics_per_node: 4, dragonfly: {groups: 4, routers_per_group: 2}}}",
      "{gpu: A100-SXM4-80GB, gpus_per_node: 2, nodes: 16, inter_node: {topology: torus, nic: ib-hdr-200, nics_per_node: "
      "2, torus: [4, 4]}}",
      "{gpu: H100-SXM5-80GB, gpus_per_node: 8, nodes: 6, inter_node: {topology: multi-cluster, clusters: [{nodes: 3, "
      "topology: fat-tree, nic: ib-ndr-400, nics_per_node: 8, switch_radix: 8}, {nodes: 3, topology: fat-tree, nic: "
      "ib-hdr-200, nics_per_node: 4}], join: {bandwidth: 3200 Gb/s, latency: 20 us}}}",
  };
  int compared = 0;
  std::size_t open_nodes = 0;
  for (const char* yaml : clusters) {
    CAPTURE(yaml);
    const Topology t = build_topology(cluster_from(yaml));
    Router r(t);
    std::size_t network = 0;  // switches and gateways: always in the core
    for (Vertex v = 0; v < t.vertex_count(); ++v) network += t.vertex(v).node < 0 ? 1 : 0;
    CHECK(r.core_size() >= network);
    CHECK(r.core_size() <= t.vertex_count());
    open_nodes += r.core_size() - network;
    MESSAGE(r.core_size(), " of ", t.vertex_count(), " vertices in the core (", network, " network)");
    std::vector<Vertex> ends;
    for (int g = 0; g < t.gpu_count(); ++g) ends.push_back(t.gpu(g));
    for (int n = 0; n < t.nodes(); ++n)
      if (t.has_node_switch(n)) ends.push_back(t.node_switch(n));
    for (std::size_t a = 0; a < ends.size(); ++a) {
      for (std::size_t b = 0; b < ends.size(); b += 1 + (a + b) % 3) {
        if (a == b) continue;
        // A node switch is reached from its own node only (the network ends at GPUs' NICs).
        const bool same_node = t.vertex(ends[a]).node == t.vertex(ends[b]).node;
        if (!same_node && (t.vertex(ends[a]).kind != VertexKind::kGpu || t.vertex(ends[b]).kind != VertexKind::kGpu)) continue;
        const auto got = r.route(ends[a], ends[b]);
        CHECK(std::vector<ChannelId>(got.begin(), got.end()) == reference_route(t, r, ends[a], ends[b]));
        ++compared;
      }
    }
  }
  CHECK(open_nodes > 0);  // both kinds of node were exercised
  MESSAGE(compared, " routes compared with the whole-graph search");
}

TEST_CASE("a DGX cluster's distances are kept for its switches only") {
  // 16 nodes x (8 GPUs, an NVSwitch, 8 NICs) = 272 node vertices, all sealed: every NIC hangs off
  // one GPU and one leaf. Core: 8 leaves of 16 NIC ports and 4 spines (radix 32, non-blocking).
  const Topology t = build_topology(fat_tree_16());
  const Router r(t);
  CHECK(t.vertex_count() == 272 + r.core_size());
  CHECK(r.core_size() == 12);
}
