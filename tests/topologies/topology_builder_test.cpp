// Topologies built from scenario keys, checked against counts worked out by hand from each
// construction's definition (ports per switch, links per pair, hops per route).
#include <doctest/doctest.h>

#include "approx.hpp"

#include "hw/error.hpp"
#include "topology_fixture.hpp"

using namespace exasim;
using namespace exasim::topologies;
using exasim::testing::cluster_from;
using exasim::testing::count;
using exasim::testing::links_of;

namespace {

double gbs(double b) { return b / 1e9; }

std::size_t hops(Router& r, const Topology& t, int a, int b) { return r.route(t.gpu(a), t.gpu(b)).size(); }

}  // namespace

TEST_CASE("NVSwitch node: every GPU one NVLink port into one switch, two hops between GPUs") {
  const Cluster c = cluster_from("{node: dgx-a100, nodes: 1}");
  const Topology t = build_topology(c);
  CHECK(count(t, VertexKind::kGpu) == 8);
  CHECK(count(t, VertexKind::kNvSwitch) == 1);
  CHECK(links_of(t, LinkKind::kNvlink) == 8);
  CHECK(gbs(t.link(0).bandwidth) == exasim::testing::approx(300));  // nvswitch-a100, per direction
  Router r(t);
  const auto route = r.route(t.gpu(0), t.gpu(5));
  CHECK(route.size() == 2);
  CHECK(r.latency(route) == exasim::testing::approx(0.7e-6));  // the fabric's GPU-to-GPU latency
  CHECK(t.has_node_switch(0));
}

TEST_CASE("xGMI mesh: one link per GPU pair carrying a seventh of the GPU's fabric bandwidth") {
  const Topology t = build_topology(cluster_from("{node: hgx-mi300x, nodes: 1}"));
  CHECK(links_of(t, LinkKind::kXgmi) == 28);  // 8 choose 2
  CHECK(gbs(t.link(0).bandwidth) == exasim::testing::approx(64));  // 448 GB/s over 7 peers
  Router r(t);
  CHECK(hops(r, t, 0, 7) == 1);
  CHECK_FALSE(t.has_node_switch(0));
}

TEST_CASE("PCIe tree: GPU pairs under switches, switches under two sockets") {
  const Cluster c = cluster_from("{node: pcie-8gpu-server, nodes: 2}");
  const Topology t = build_topology(c);
  CHECK(count(t, VertexKind::kPcieSwitch) == 8);  // 4 per node
  CHECK(count(t, VertexKind::kHostBridge) == 4);  // 2 per node
  CHECK(links_of(t, LinkKind::kHost) == 2);
  CHECK(count(t, VertexKind::kNic) == 4);
  Router r(t);
  CHECK(hops(r, t, 0, 1) == 2);  // same PCIe switch
  CHECK(hops(r, t, 0, 2) == 4);  // other switch, same socket
  CHECK(hops(r, t, 0, 4) == 5);  // other socket
  // Between GPUs of one node the route never loops through a NIC, even one on the way.
  for (ChannelId ch : r.route(t.gpu(0), t.gpu(6))) {
    const auto [a, b] = t.ends(t.link_of(ch));
    CHECK(t.vertex(a).kind != VertexKind::kNic);
    CHECK(t.vertex(b).kind != VertexKind::kNic);
  }
}

TEST_CASE("2-tier fat-tree: leaves with radix/2 NIC ports, spines with one trunk per leaf") {
  // 16 nodes x 8 NICs = 128 ports; radix 32, non-blocking: 16 down + 16 up per leaf -> 8 leaves;
  // 8 x 16 uplinks / 32 ports = 4 spines, 4 links from each leaf to each spine.
  const Cluster c = cluster_from(
      "{node: dgx-a100, nodes: 16, inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 8, switch_radix: 32}}");
  const Topology t = build_topology(c);
  CHECK(count(t, VertexKind::kSwitch, 1) == 8);
  CHECK(count(t, VertexKind::kSwitch, 2) == 4);
  CHECK(links_of(t, LinkKind::kNetwork) == 128 + 8 * 4);
  int physical = 0;
  for (std::uint32_t id = 0; id < t.link_count(); ++id) {
    const LinkInfo& l = t.link(id);
    if (l.kind != LinkKind::kNetwork) continue;
    physical += l.count;
    if (l.count > 1) CHECK(gbs(l.bandwidth) == exasim::testing::approx(4 * 25.0));
  }
  CHECK(physical == 128 + 128);
  Router r(t);
  CHECK(hops(r, t, 0, 8) == 4);                                       // node 1 shares leaf 0
  const auto far = r.route(t.gpu(0), t.gpu(16));                      // node 2: leaf 1
  CHECK(far.size() == 6);
  CHECK(r.latency(far) == exasim::testing::approx(1.0e-6 + 2 * 130e-9));     // NIC latency + 2 extra switches
}

TEST_CASE("fat-tree oversubscription takes uplinks from the leaves") {
  // radix 24 at 2:1: 16 ports down, 8 up; 8 leaves, ceil(64 / 24) = 3 spines, trunks of 3, 3, 2.
  const Cluster c = cluster_from(
      "{node: dgx-a100, nodes: 16, inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 8, switch_radix: 24, "
      "oversubscription: 2}}");
  const Topology t = build_topology(c);
  CHECK(count(t, VertexKind::kSwitch, 1) == 8);
  CHECK(count(t, VertexKind::kSwitch, 2) == 3);
  int up = 0;
  for (std::uint32_t id = 0; id < t.link_count(); ++id)
    if (t.link(id).kind == LinkKind::kNetwork && t.vertex(t.ends(id).first).kind == VertexKind::kSwitch) up += t.link(id).count;
  CHECK(up == 8 * 8);
}

TEST_CASE("3-tier fat-tree: pods of radix/2 leaves, aggregation switches, cores") {
  // 16 nodes x 4 NICs = 64 ports; radix 8: 4 down, 4 up -> 16 leaves > 8: three tiers.
  // Pods of 4 leaves -> 4 pods x 4 aggregation switches; cores: 4 groups of ceil(4 x 4 / 8) = 2.
  const Cluster c = cluster_from(
      "{node: dgx-a100, nodes: 16, inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 4, switch_radix: 8}}");
  const Topology t = build_topology(c);
  CHECK(count(t, VertexKind::kSwitch, 1) == 16);
  CHECK(count(t, VertexKind::kSwitch, 2) == 16);
  CHECK(count(t, VertexKind::kSwitch, 3) == 8);
  Router r(t);
  CHECK(hops(r, t, 0, 8) == 6);      // node 1: its own leaf (4 NICs fill one), same pod
  CHECK(hops(r, t, 0, 8 * 8) == 8);  // node 8: another pod, through a core
}

TEST_CASE("rail-optimized: NIC i of every node on rail i, same-rail traffic stays on its leaf") {
  const Cluster c = cluster_from(
      "{node: dgx-a100, nodes: 16, inter_node: {topology: rail-optimized, nic: ib-hdr-200, nics_per_node: 8, "
      "switch_radix: 32}}");
  const Topology t = build_topology(c);
  CHECK(count(t, VertexKind::kSwitch, 1) == 8);  // one 16-port leaf per rail
  CHECK(count(t, VertexKind::kSwitch, 2) == 4);
  Router r(t);
  CHECK(hops(r, t, 0, 8) == 4);   // rail 0 to rail 0
  CHECK(hops(r, t, 0, 9) == 6);   // rail 0 to rail 1: up to a spine
  CHECK(hops(r, t, 3, 8 * 15 + 3) == 4);
}

TEST_CASE("single switch, dragonfly and torus") {
  SUBCASE("single switch") {
    const Topology t = build_topology(cluster_from(
        "{node: dgx-a100, nodes: 4, inter_node: {topology: single-switch, nic: ib-ndr-400, nics_per_node: 8}}"));
    CHECK(count(t, VertexKind::kSwitch) == 1);
    CHECK(links_of(t, LinkKind::kNetwork) == 32);
  }
  SUBCASE("dragonfly") {
    // 4 groups x 2 routers, 2 nodes per router; 1 local link per group; 2 x 2 global ports per
    // group over 3 other groups: 1 link per pair of groups, 6 in all.
    const Cluster c = cluster_from(
        "{gpu: A100-SXM4-80GB, gpus_per_node: 1, nodes: 16, inter_node: {topology: dragonfly, nic: slingshot-11, "
        "dragonfly: {groups: 4, routers_per_group: 2, global_links_per_router: 2}}}");
    const Topology t = build_topology(c);
    CHECK(count(t, VertexKind::kSwitch) == 8);
    CHECK(links_of(t, LinkKind::kNetwork) == 16 + 4 + 6);
    Router r(t);
    CHECK(hops(r, t, 0, 1) == 4);            // same router
    CHECK(hops(r, t, 0, 2) == 5);            // same group, other router
    for (int dst = 4; dst < 16; ++dst) CHECK(hops(r, t, 0, dst) <= 8);  // local, global, local at most
  }
  SUBCASE("2D and 3D torus") {
    const Topology t2 = build_topology(cluster_from(
        "{gpu: A100-SXM4-80GB, gpus_per_node: 1, nodes: 16, inter_node: {topology: torus, nic: ib-hdr-200, torus: [4, 4]}}"));
    CHECK(count(t2, VertexKind::kSwitch) == 16);
    CHECK(links_of(t2, LinkKind::kNetwork) == 16 + 32);
    Router r(t2);
    CHECK(hops(r, t2, 0, 10) == 8);  // (0,0) -> (2,2): 4 router hops + 4 to and from the routers
    CHECK(hops(r, t2, 0, 3) == 5);   // (0,0) -> (3,0): 1 hop over the wrap-around link
    const Topology t3 = build_topology(cluster_from(
        "{gpu: A100-SXM4-80GB, gpus_per_node: 1, nodes: 8, inter_node: {topology: torus, nic: ib-hdr-200, torus: [2, 2, 2]}}"));
    CHECK(links_of(t3, LinkKind::kNetwork) == 8 + 12);
  }
}

TEST_CASE("a mix of NIC types and several clusters joined by a slower link") {
  SUBCASE("mixed NICs") {
    const Topology t = build_topology(cluster_from(
        "{node: dgx-a100, nodes: 4, inter_node: {topology: single-switch, nic_groups: [{nodes: 2, nic: ib-ndr-400, "
        "nics_per_node: 8}, {nodes: 2, nic: ib-hdr-200, nics_per_node: 4}]}}"));
    int fast = 0, slow = 0;
    for (std::uint32_t id = 0; id < t.link_count(); ++id) {
      if (t.link(id).kind != LinkKind::kNetwork) continue;
      (gbs(t.link(id).bandwidth) > 30 ? fast : slow) += 1;
    }
    CHECK(fast == 16);
    CHECK(slow == 8);
  }
  SUBCASE("multi-cluster") {
    const Cluster c = cluster_from(
        "{node: dgx-a100, nodes: 4, inter_node: {topology: multi-cluster, clusters: [{nodes: 2, topology: "
        "single-switch, nic: ib-ndr-400, nics_per_node: 8}, {nodes: 2, topology: fat-tree, nic: ib-hdr-200, "
        "nics_per_node: 8}], join: {bandwidth: 100 Gb/s, latency: 10 us}}}");
    const Topology t = build_topology(c);
    CHECK(count(t, VertexKind::kGateway) == 2);
    Router r(t);
    const auto across = r.route(t.gpu(0), t.gpu(16));
    bool joined = false;
    for (ChannelId ch : across) joined = joined || t.link(t.link_of(ch)).kind == LinkKind::kJoin;
    CHECK(joined);
    CHECK(r.latency(across) > 10e-6);
    CHECK(hops(r, t, 0, 8) == 4);  // inside the first cluster
  }
}

TEST_CASE("topologies that cannot be built are config errors with the place") {
  auto message = [](const std::string& yaml) {
    try {
      cluster_from(yaml);
    } catch (const Error& e) {
      return e.describe();
    }
    return std::string("no error");
  };
  CHECK(message("{gpu: A100-SXM4-80GB, gpus_per_node: 1, nodes: 16, inter_node: {topology: torus, nic: ib-hdr-200, "
                "torus: [4, 5]}}")
            .find("test.yaml") != std::string::npos);
  CHECK(message("{node: dgx-a100, nodes: 2, inter_node: {topology: fat-tre, nic: ib-hdr-200}}").find("fat-tree") !=
        std::string::npos);
  CHECK(message("{node: dgx-a100, nodes: 4, inter_node: {topology: single-switch, nic_groups: [{nodes: 3, nic: "
                "ib-hdr-200}]}}")
            .find("3 nodes") != std::string::npos);
  CHECK(message("{node: dgx-a100, nodes: 4, inter_node: {topology: multi-cluster, clusters: [{nodes: 4, topology: "
                "single-switch, nic: ib-hdr-200}], join: {bandwidth: 1 GB/s}}}")
            .find("two clusters") != std::string::npos);
}

TEST_CASE("a scenario reports its other sections' mistakes before it builds the cluster's graph") {
  // A torus of 4 x 5 for 16 nodes is found only by building the graph (seconds at 2^20 GPUs, so
  // last); a negative global batch is found by reading its key.
  const auto message = [](const std::string& global_batch) {
    const std::string yaml =
        "cluster: {gpu: A100-SXM4-80GB, gpus_per_node: 1, nodes: 16, inter_node: {topology: torus, nic: ib-hdr-200, "
        "torus: [4, 5]}}\nmodel: llama3.1-8b\ntraining: {seq_len: 4096, micro_batch: 1, global_batch: " +
        global_batch + ", parallelism: {tp: 1, pp: 1, dp: 16}}\n";
    try {
      workloads::scenario_from_node(config::load_string(yaml, "test.yaml"), exasim::testing::test_catalog(), ".");
    } catch (const Error& e) {
      return e.describe();
    }
    return std::string("no error");
  };
  CHECK(message("-1").find("test.yaml:3: training.global_batch") != std::string::npos);
  CHECK(message("16").find("test.yaml:1: cluster.inter_node") != std::string::npos);
  CHECK(message("16").find("torus") != std::string::npos);
}

TEST_CASE("the shipped scenario still loads and builds its 1024-GPU fat-tree") {
  const Cluster c = workloads::read_cluster(
      config::load_file(std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/gpt3-175b-a100-1024.yaml")["cluster"],
      exasim::testing::test_catalog());
  const Topology t = build_topology(c);
  CHECK(count(t, VertexKind::kGpu) == 1024);
  CHECK(count(t, VertexKind::kNic) == 1024);
  CHECK(count(t, VertexKind::kSwitch, 1) == 32);  // 64-port leaves, 32 down
  CHECK(count(t, VertexKind::kSwitch, 2) == 16);
}

TEST_CASE("the example cluster files load and build") {
  for (const char* name : {"h100-rail-optimized-512", "mi300x-dragonfly-256", "two-sites", "a100-dgx-vidur"}) {
    CAPTURE(name);
    const std::string file = std::string(EXASIM_SOURCE_DIR) + "/configs/clusters/" + name + ".yaml";
    const Cluster c = workloads::read_cluster(config::load_file(file)["cluster"], exasim::testing::test_catalog());
    const Topology t = build_topology(c);
    CHECK(count(t, VertexKind::kGpu) == c.gpu_count());
    Router r(t);
    CHECK(r.route(t.gpu(0), t.gpu(c.gpu_count() - 1)).size() >= 4);
  }
}
