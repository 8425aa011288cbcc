// Contention where it must appear, and only under the flow backend: concurrent collectives run
// as engine tasks on their own streams, so SimGrid shares the links their flows have in common.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <memory>

#include "network_fixture.hpp"
#include "sim/engine.hpp"

using namespace exasim;
using namespace exasim::testing;

namespace {

// Runs `ops` at once, each on its own stream; returns when the last one ends.
double together(const topologies::Cluster& c, const std::vector<sim::CommOp>& ops, const std::string& backend) {
  sim::ExecGraph g;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const sim::StreamId s = g.add_stream(g.add_device("d" + std::to_string(i)), sim::StreamKind::kComm, "comm");
    sim::TaskSpec t;
    t.label = "op";
    t.kind = sim::TaskKind::kCollective;
    t.stream = s;
    t.comm_op = static_cast<std::uint32_t>(i);
    g.add_task(t);
  }
  sim::NetworkOptions o;
  o.backend = backend;
  std::unique_ptr<sim::NetworkBackend> net;
  if (backend == "flow") net = std::make_unique<sim::FlowNetwork>(c, models::CollectiveParams{}, o);
  else net = std::make_unique<sim::AnalyticalNetwork>(c, models::CollectiveParams{}, o);
  return sim::Engine(g, &ops, net.get()).run().makespan();
}

double alone(const topologies::Cluster& c, const sim::CommOp& op) {
  sim::FlowNetwork flow(c, {}, {});
  return flow.duration(op, 0);
}

}  // namespace

TEST_CASE("two all-reduces whose routes share a 2:1 oversubscribed uplink take twice as long under flow") {
  // Radix-3 leaves at 2:1: two NIC ports down, one up. Nodes 0-1 on leaf 0, 2-3 on leaf 1; the
  // all-reduces {0, 2} and {1, 3} both cross the single uplink of each leaf, in both directions.
  const auto c = cluster_of(
      "{gpu: A100-SXM4-80GB, gpus_per_node: 1, nodes: 4, inter_node: {topology: fat-tree, nic: ib-hdr-200, "
      "switch_radix: 3, oversubscription: 2}}");
  const std::vector<sim::CommOp> ops{{sim::CommKind::kAllReduce, 256e6, {0, 2}}, {sim::CommKind::kAllReduce, 256e6, {1, 3}}};
  const double solo = alone(c, ops[0]);
  CHECK(together(c, ops, "flow") / solo == exasim::testing::approx(2.0).epsilon(0.05));
  CHECK(together(c, ops, "analytical") / solo == exasim::testing::approx(1.0).epsilon(0.01));  // contention-free
  // Non-blocking (radix 4: two ports up), the two take separate spines and do not slow down.
  const auto free = cluster_of(
      "{gpu: A100-SXM4-80GB, gpus_per_node: 1, nodes: 4, inter_node: {topology: fat-tree, nic: ib-hdr-200, "
      "switch_radix: 4}}");
  CHECK(together(free, ops, "flow") / alone(free, ops[0]) == exasim::testing::approx(1.0).epsilon(0.05));
}

TEST_CASE("a rail-optimized fabric beats a plain fat-tree of the same switch count for rail-aligned collectives") {
  // 16 DGX nodes, 128 NIC ports; radix 24 at 2:1 gives 8 leaves of 16 ports and 3 spines either
  // way. The 8 data-parallel groups {l, 8 + l, ..., 120 + l} all-reduce at once: on rails each
  // stays on its rail's leaf; on the plain fat-tree a leaf holds two whole nodes and half of every
  // ring's hops cross its 2:1 uplinks.
  const std::string common = "nic: ib-hdr-200, nics_per_node: 8, switch_radix: 24, oversubscription: 2}}";
  const auto rail = cluster_of("{node: dgx-a100, nodes: 16, inter_node: {topology: rail-optimized, " + common);
  const auto plain = cluster_of("{node: dgx-a100, nodes: 16, inter_node: {topology: fat-tree, " + common);
  CHECK(switch_count(rail) == switch_count(plain));
  std::vector<sim::CommOp> ops;
  for (std::uint32_t l = 0; l < 8; ++l) {
    std::vector<std::uint32_t> ranks;
    for (std::uint32_t n = 0; n < 16; ++n) ranks.push_back(n * 8 + l);
    ops.emplace_back(sim::CommKind::kAllReduce, 256e6, ranks);
  }
  const double t_rail = together(rail, ops, "flow");
  const double t_plain = together(plain, ops, "flow");
  MESSAGE("rail-aligned all-reduces: rail-optimized ", t_rail * 1e3, " ms, fat-tree ", t_plain * 1e3, " ms");
  CHECK(t_rail < 0.75 * t_plain);
}

TEST_CASE("all-to-all across a dragonfly is bounded by its global links") {
  // 4 groups, one router each (so no local link carries transit), 4 nodes x 4 GPUs per router,
  // a NIC per GPU: 64 ranks, 16 per group. Every pair of groups exchanges 16 x 16 x S/64 = 4 S
  // each way over its global links, while each NIC sends 63/64 S: the global links decide, and
  // twice as many of them halve the time.
  auto dragonfly = [](int global_per_router) {
    return cluster_of(
        "{gpu: A100-SXM4-80GB, gpus_per_node: 4, nodes: 16, inter_node: {topology: dragonfly, nic: slingshot-11, "
        "nics_per_node: 4, dragonfly: {groups: 4, routers_per_group: 1, global_links_per_router: " +
        std::to_string(global_per_router) + "}}}");
  };
  const double S = 64e6;
  const double link = 25e9 * 0.9;  // slingshot-11 port rate x network efficiency
  const auto one = dragonfly(3);   // 3 global ports over 3 other groups: 1 link per pair
  const auto two = dragonfly(6);   // 2 links per pair
  const double t1 = alone(one, op_on(one, sim::CommKind::kAllToAll, S, "packed", 64));
  const double t2 = alone(two, op_on(two, sim::CommKind::kAllToAll, S, "packed", 64));
  const double global_bound = 4 * S / link;
  const double nic_bound = 63.0 / 64 * S / link;
  MESSAGE("dragonfly all-to-all: ", t1 * 1e3, " ms; global-link bound ", global_bound * 1e3, " ms; NIC bound ",
          nic_bound * 1e3, " ms; with twice the global links ", t2 * 1e3, " ms");
  CHECK(t1 >= global_bound);
  CHECK(t1 < 1.05 * global_bound);
  CHECK(t2 / t1 == exasim::testing::approx(0.5).epsilon(0.05));
}
