// The analytical backend against hand calculations (alpha-beta per round over the bottleneck
// channel) and against the closed-form model (models/collective/collective_model.hpp), a second
// model that knows no topology, on groups where both apply.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "models/collective/collective_model.hpp"
#include "network_fixture.hpp"

using namespace exasim;
using namespace exasim::testing;
using models::Collective;
using models::CollectiveAlgorithm;

TEST_CASE("ring all-reduce inside an NVSwitch node: 2(n-1) steps of S/n over one NVLink port") {
  const auto c = cluster_of("{node: dgx-a100, nodes: 1}");
  const models::CollectiveParams p = simple_only();
  sim::AnalyticalNetwork net(c, p, forcing(Collective::kAllReduce, CollectiveAlgorithm::kRing));
  const double S = 256e6, n = 8;
  const double bw = 300e9 * p.intra_efficiency;  // nvswitch-a100 per direction x efficiency
  const double step = p.step_overhead_s + 0.7e-6;  // software + GPU-switch-GPU latency
  const auto cost = net.cost(op_on(c, sim::CommKind::kAllReduce, S, "packed", 8));
  CHECK(cost.algorithm == CollectiveAlgorithm::kRing);
  CHECK(cost.time_s == exasim::testing::approx(2 * (n - 1) * (step + S / n / bw)).epsilon(1e-9));
  CHECK(cost.bus_bandwidth == exasim::testing::approx(2 * (n - 1) / n * S / cost.time_s));
}

TEST_CASE("pipeline fill: once per phase, one round of a ring, one peer's share of a direct round") {
  const auto c = cluster_of("{node: dgx-a100, nodes: 1}");
  models::CollectiveParams p = simple_only();
  const double S = 256e6, n = 8, bw = 300e9 * p.intra_efficiency, step = p.step_overhead_s + 0.7e-6;
  models::CollectiveParams filled = p;
  filled.pipeline_fill_rounds = 0.5;
  // Ring all-reduce: one phase of 2(n-1) rounds of S/n, then half a round more.
  sim::AnalyticalNetwork ring(c, filled, forcing(Collective::kAllReduce, CollectiveAlgorithm::kRing));
  const double t = ring.cost(op_on(c, sim::CommKind::kAllReduce, S, "packed", 8)).time_s;
  CHECK(t == exasim::testing::approx(2 * (n - 1) * (step + S / n / bw) + 0.5 * S / n / bw).epsilon(1e-9));
  // Two GPUs: one round each way of S/2, and half a round: 25% more transfer than the ideal pipeline.
  const double t2 = ring.cost(op_on(c, sim::CommKind::kAllReduce, S, "packed", 2)).time_s;
  CHECK(t2 == exasim::testing::approx(2 * (step + S / 2 / bw) + 0.5 * S / 2 / bw).epsilon(1e-9));
  // Direct all-to-all: one round to the 7 peers over the GPU's port, (n-1)/n of S; the fill is
  // one peer's share of it.
  sim::AnalyticalNetwork a2a(c, filled), bare(c, p);
  const auto op = op_on(c, sim::CommKind::kAllToAll, S, "packed", 8);
  const double extra = a2a.cost(op).time_s - bare.cost(op).time_s;
  CHECK(extra == exasim::testing::approx(0.5 * (S / n) / bw).epsilon(1e-6));
  // The closed form charges the same.
  models::GroupLinks links;
  links.intra_bandwidth = c.intra.bandwidth;
  links.intra_latency = c.intra.latency;
  const auto closed = models::collective_cost(Collective::kAllReduce, S, {8, 8}, links, filled, CollectiveAlgorithm::kRing);
  CHECK(closed.time_s == exasim::testing::approx(t).epsilon(1e-9));
}

TEST_CASE("protocols: each call takes its fastest, base latency included, in the topology model and the closed form") {
  const auto c = cluster_of("{node: dgx-a100, nodes: 1}");
  models::CollectiveParams p;  // LL128 at 120/128 and LL at 4/8 of Simple's rate; step latencies 1, 0.8, 0.6 us
  p.launch_overhead_s = 4e-6, p.simple_base_latency_s = 30e-6, p.ll128_base_latency_s = 5e-6;
  sim::AnalyticalNetwork net(c, p, forcing(Collective::kAllReduce, CollectiveAlgorithm::kRing));
  const double n = 8, bw = 300e9 * p.intra_efficiency, hop = 0.7e-6;
  const auto ring = [&](double S) { return net.cost(op_on(c, sim::CommKind::kAllReduce, S, "packed", 8)).time_s; };
  // 4 kB: LL (no base latency; 2 wire bytes per payload byte) beats LL128's 5 us and Simple's 30.
  const double small = 4e3;
  CHECK(ring(small) == exasim::testing::approx(4e-6 + 2 * (n - 1) * (0.6e-6 + hop + 2 * small / n / bw)).epsilon(1e-9));
  // 1 GB: Simple, its 30 us paid once, against LL128's 6% more wire bytes (0.5 ms here).
  const double large = 1e9;
  CHECK(ring(large) ==
        exasim::testing::approx(4e-6 + 30e-6 + 2 * (n - 1) * (1e-6 + hop + large / n / bw)).epsilon(1e-9));
  // The closed form (no topology) takes the same protocol at every size.
  models::GroupLinks links;
  links.intra_bandwidth = c.intra.bandwidth;
  links.intra_latency = c.intra.latency;
  for (double S : {small, 256e3, 4e6, 64e6, large}) {
    CAPTURE(S);
    const auto closed = models::collective_cost(Collective::kAllReduce, S, {8, 8}, links, p, CollectiveAlgorithm::kRing);
    CHECK(closed.time_s == exasim::testing::approx(ring(S)).epsilon(1e-9));
  }
}

TEST_CASE("all-to-all: a step latency per peer, the data at once, and the closed form charges the same") {
  const auto c = cluster_of("{node: dgx-a100, nodes: 1}");
  const models::CollectiveParams p = simple_only();
  sim::AnalyticalNetwork net(c, p);
  const double bw = 300e9 * p.intra_efficiency, step = p.step_overhead_s + 0.7e-6;
  models::GroupLinks links;
  links.intra_bandwidth = c.intra.bandwidth;
  links.intra_latency = c.intra.latency;
  for (int n : {2, 4, 8}) {
    CAPTURE(n);
    const double S = 64e6;
    const double t = net.cost(op_on(c, sim::CommKind::kAllToAll, S, "packed", n)).time_s;
    // n - 1 handshakes; each GPU sends (n - 1) / n of its buffer through its port.
    CHECK(t == exasim::testing::approx((n - 1) * step + S * (n - 1) / n / bw).epsilon(1e-9));
    CHECK(models::collective_cost(Collective::kAllToAll, S, {n, n}, links, p).time_s == exasim::testing::approx(t).epsilon(1e-9));
  }
}

TEST_CASE("pipeline fill through the switch (NVLS): one member's 1/k slice of the buffer") {
  const auto c = cluster_of("{node: dgx-h100, nodes: 1}");
  models::CollectiveParams bare = simple_only();
  models::CollectiveParams filled = bare;
  filled.pipeline_fill_rounds = 0.5;
  const auto opts = forcing(Collective::kAllReduce, CollectiveAlgorithm::kNvls);
  sim::AnalyticalNetwork with(c, filled, opts), without(c, bare, opts);
  const auto t = [&](sim::AnalyticalNetwork& net, double S) {
    return net.cost(op_on(c, sim::CommKind::kAllReduce, S, "packed", 8)).time_s;
  };
  const double S = 256e6;
  REQUIRE(with.cost(op_on(c, sim::CommKind::kAllReduce, S, "packed", 8)).algorithm == CollectiveAlgorithm::kNvls);
  // The round's bytes term, then half of one member's eighth of it.
  const double bytes_term = t(without, S) - t(without, 1);
  CHECK(t(with, S) - t(without, S) == exasim::testing::approx(0.5 * bytes_term / 8).epsilon(1e-6));
}

TEST_CASE("send/recv across nodes: launch + NIC route latency + bytes over the NIC") {
  const auto c = cluster_of("{node: dgx-a100, nodes: 2}");
  models::CollectiveParams p;
  p.p2p_launch_overhead_s = 5e-6;
  sim::AnalyticalNetwork net(c, p);
  const double S = 64e6;
  const auto cost = net.cost(op_on(c, sim::CommKind::kSendRecv, S, "0,8", 2));
  // ib-hdr-200: 25 GB/s and 1 us NIC to NIC through one switch (the catalog's fat-tree puts both
  // nodes on one leaf); the GPU's PCIe path (31.5 GB/s) is wider.
  CHECK(cost.time_s == exasim::testing::approx(5e-6 + 1e-6 + S / (25e9 * p.inter_efficiency)).epsilon(1e-9));
}

TEST_CASE("multi-node ring: the topology model equals the closed-form model on a non-blocking network") {
  // 2 x 8 GPUs, 8 NICs per node: the closed form's ring crosses nodes at 8 x the per-GPU NIC
  // share; the topology model gets there with 8 channels, each through its own NIC.
  const auto c = cluster_of("{node: dgx-a100, nodes: 2}");
  models::CollectiveParams p = simple_only();
  p.pipeline_fill_rounds = 0.3;  // one fill per phase on both sides
  sim::AnalyticalNetwork net(c, p, forcing(Collective::kAllReduce, CollectiveAlgorithm::kRing));
  models::GroupLinks links;
  links.intra_bandwidth = c.intra.bandwidth;
  links.intra_latency = c.intra.latency;
  links.inter_bandwidth = c.nic_bandwidth_per_gpu(c.gpus_per_node);
  links.inter_latency = c.inter->nic.latency;
  for (double S : {1e6, 64e6, 1e9}) {
    const auto topo = net.cost(op_on(c, sim::CommKind::kAllReduce, S, "packed", 16));
    const auto closed = models::collective_cost(Collective::kAllReduce, S, {16, 8}, links, p, CollectiveAlgorithm::kRing);
    CHECK(topo.time_s == exasim::testing::approx(closed.time_s).epsilon(1e-6));
  }
}

TEST_CASE("symmetric copies: eight DP rings of a node share its NICs only when the NICs are shared") {
  // One GPU per node in the group; its 7 node peers run the same op (training's symmetry).
  sim::NetworkOptions copies;
  copies.symmetric_copies = true;
  const auto eight = cluster_of("{node: dgx-a100, nodes: 4}");
  const auto one = cluster_of(
      "{node: dgx-a100, nodes: 4, inter_node: {topology: single-switch, nic: ib-hdr-200, nics_per_node: 1}}");
  const double S = 256e6;
  auto t = [&](const topologies::Cluster& c, const sim::NetworkOptions& o) {
    sim::AnalyticalNetwork net(c, {}, o);
    return net.cost(op_on(c, sim::CommKind::kAllReduce, S, "spread", 4)).time_s;
  };
  CHECK(t(eight, copies) == exasim::testing::approx(t(eight, {})).epsilon(1e-9));  // a NIC per GPU: no sharing
  CHECK(t(one, copies) > 6 * t(one, {}));                                  // one NIC for 8 rings
}

TEST_CASE("the tuner picks by size: a low-latency protocol for small messages, bandwidth for large") {
  const auto a100 = cluster_of("{node: dgx-a100, nodes: 1}");
  sim::AnalyticalNetwork ring(a100, {});
  const auto small = ring.planner().choose(op_on(a100, sim::CommKind::kAllReduce, 4096, "packed", 8));
  CHECK(small.plan->algorithm == CollectiveAlgorithm::kRing);
  CHECK(small.protocol == models::Protocol::kLL);
  CHECK(ring.planner().choose(op_on(a100, sim::CommKind::kAllReduce, 4e9, "packed", 8)).protocol ==
        models::Protocol::kSimple);
  const auto c = cluster_of("{node: dgx-h100, nodes: 1}");
  sim::AnalyticalNetwork net(c, {});
  const auto large = net.planner().choose(op_on(c, sim::CommKind::kAllReduce, 4e9, "packed", 8));
  CHECK(large.plan->algorithm == CollectiveAlgorithm::kNvls);  // in-switch reduction on NVSwitch gen3
  CHECK(large.protocol == models::Protocol::kSimple);
  // A forced algorithm that cannot run the group falls back to the tuner's choice.
  sim::AnalyticalNetwork forced(c, {}, forcing(Collective::kAllReduce, CollectiveAlgorithm::kTree));
  CHECK(forced.cost(op_on(c, sim::CommKind::kAllReduce, 4e9, "packed", 8)).algorithm != CollectiveAlgorithm::kTree);
}

TEST_CASE("nothing to communicate costs nothing, costs are cached per op object") {
  const auto c = cluster_of("{node: dgx-a100, nodes: 1}");
  sim::AnalyticalNetwork net(c, {});
  CHECK(net.cost(op_on(c, sim::CommKind::kAllReduce, 1e9, "packed", 1)).time_s == 0);
  const sim::CommOp op = op_on(c, sim::CommKind::kAllGather, 1e8, "packed", 4);
  const double t = net.duration(op, 0);
  CHECK(t > 0);
  CHECK(net.duration(op, 5.0) == t);
  CHECK_THROWS_AS(net.cost(sim::CommOp(sim::CommKind::kAllReduce, 1, {0, 99})), PlanError);
}
