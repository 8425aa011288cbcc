// The two backends agree when nothing else is on the network: a table of collectives, sizes,
// group shapes and topologies, each run alone under the flow backend (SimGrid, max-min) and
// costed by the analytical backend. Within one round, the analytical backend charges the most
// loaded channel, or the round's weighted max-min sharing where that takes longer; SimGrid
// shares the same way in time, so they differ mainly by how route latencies overlap transfers.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "network_fixture.hpp"

using namespace exasim;
using namespace exasim::testing;

namespace {

struct Row {
  const char* cluster;
  sim::CommKind kind;
  const char* layout;
  int ranks;
};

const char* kClusters[] = {
    "{node: dgx-a100, nodes: 4}",
    "{node: dgx-h100, nodes: 1}",
    "{node: hgx-mi300x, nodes: 1}",
    "{node: pcie-8gpu-server, nodes: 2}",
    "{node: dgx-a100, nodes: 8, inter_node: {topology: fat-tree, nic: ib-hdr-200, nics_per_node: 8, switch_radix: 16, "
    "oversubscription: 3}}",
    "{node: dgx-a100, nodes: 8, inter_node: {topology: rail-optimized, nic: ib-hdr-200, nics_per_node: 8, "
    "switch_radix: 16}}",
    "{gpu: A100-SXM4-80GB, gpus_per_node: 4, nodes: 8, inter_node: {topology: dragonfly, nic: slingshot-11, "
    "nics_per_node: 4, dragonfly: {groups: 4, routers_per_group: 2}}}",
    "{gpu: A100-SXM4-80GB, gpus_per_node: 2, nodes: 16, inter_node: {topology: torus, nic: ib-hdr-200, nics_per_node: "
    "2, torus: [4, 4]}}",
};

// flow / analytical - 1.
double signed_gap(const topologies::Cluster& c, const sim::CommOp& op, bool fast_forward) {
  sim::NetworkOptions o;
  o.fast_forward = fast_forward;
  sim::AnalyticalNetwork analytical(c, {}, o);
  sim::FlowNetwork flow(c, {}, o);
  const double a = analytical.cost(op).time_s;
  const double f = flow.duration(op, 0);
  INFO("analytical ", a, " s, flow ", f, " s");
  return a > 0 ? f / a - 1 : f;
}

double relative_gap(const topologies::Cluster& c, const sim::CommOp& op, bool fast_forward) {
  return std::fabs(signed_gap(c, op, fast_forward));
}

}  // namespace

// The fill (CollectiveParams::pipeline_fill_rounds) is one model in both backends: the flow
// backend waits it before a phase's first round, as much as the analytical backend adds.
TEST_CASE("pipeline fill: the flow backend charges what the analytical backend charges") {
  const topologies::Cluster c = cluster_of("{node: dgx-a100, nodes: 1}");
  models::CollectiveParams filled;
  filled.pipeline_fill_rounds = 0.6;
  for (sim::CommKind kind : {sim::CommKind::kAllReduce, sim::CommKind::kAllGather, sim::CommKind::kAllToAll}) {
    for (int ranks : {2, 8}) {
      const sim::CommOp op = op_on(c, kind, 256e6, "packed", ranks);
      sim::AnalyticalNetwork a0(c, {}), a1(c, filled);
      sim::FlowNetwork f0(c, {}, {}), f1(c, filled, {});
      const double analytical = a1.cost(op).time_s - a0.cost(op).time_s;
      const double flow = f1.duration(op, 0) - f0.duration(op, 0);
      INFO("ranks ", ranks, ": analytical fill ", analytical, " s, flow ", flow, " s");
      CHECK(analytical > 0);
      CHECK(flow == doctest::Approx(analytical).epsilon(0.02));
    }
  }
}

TEST_CASE("flow and analytical agree within 5% on every collective run alone") {
  const sim::CommKind kinds[] = {sim::CommKind::kAllReduce, sim::CommKind::kReduceScatter, sim::CommKind::kAllGather,
                                 sim::CommKind::kAllToAll,  sim::CommKind::kBroadcast,     sim::CommKind::kReduce};
  const char* names[] = {"DGX A100 x4 (fat-tree)", "DGX H100 x1",           "MI300X x1 (xGMI)",  "PCIe 8-GPU x2",
                         "DGX A100 x8, 3:1 fat-tree", "DGX A100 x8, rail-opt.", "4-GPU x8 dragonfly", "2-GPU x16 4x4 torus"};
  const char* kind_names[] = {"all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast", "send/recv", "reduce"};
  int checked = 0;
  double worst = 0;
  std::ostringstream table;
  table << "\n  cluster                      op               ops   largest gap\n";
  std::size_t name = 0;
  for (const char* yaml : kClusters) {
    const topologies::Cluster c = cluster_of(yaml);
    std::map<int, std::pair<int, double>> by_kind;  // ops, largest gap
    const int g = c.gpus_per_node, n = c.gpu_count();
    std::vector<std::pair<std::string, int>> groups = {{"packed", g}, {"packed", n}};
    if (c.nodes > 1) groups.push_back({"spread", c.nodes});
    if (c.nodes >= 2 && g >= 2) groups.push_back({"2x" + std::to_string(g / 2), g});
    for (const auto& [layout, ranks] : groups) {
      for (sim::CommKind kind : kinds) {
        for (double bytes : {64e3, 16e6, 256e6}) {
          const sim::CommOp op = op_on(c, kind, bytes, layout, ranks);
          const std::string where = yaml;
          CAPTURE(where);
          CAPTURE(layout);
          CAPTURE(ranks);
          CAPTURE(static_cast<int>(kind));
          CAPTURE(bytes);
          const double gap = relative_gap(c, op, true);
          CHECK(gap < 0.05);
          worst = std::max(worst, gap);
          ++checked;
          auto& [ops, largest] = by_kind[static_cast<int>(kind)];
          ++ops, largest = std::max(largest, gap);
        }
      }
    }
    for (const auto& [kind, cell] : by_kind) {
      char line[128];
      std::snprintf(line, sizeof line, "  %-28s %-15s %4d   %5.2f%%\n", names[name], kind_names[kind], cell.first, cell.second * 100);
      table << line;
    }
    ++name;
  }
  MESSAGE("backends compared on ", checked, " collectives; largest gap ", worst * 100, "%", table.str());
}

TEST_CASE("flow and analytical agree round by round too (no fast-forward)") {
  const topologies::Cluster c = cluster_of(kClusters[0]);
  for (const char* layout : {"packed", "spread", "2x4"}) {
    const int ranks = std::string(layout) == "packed" ? 32 : std::string(layout) == "spread" ? 4 : 8;
    CHECK(relative_gap(c, op_on(c, sim::CommKind::kAllReduce, 64e6, layout, ranks), false) < 0.05);
  }
  CHECK(relative_gap(c, op_on(c, sim::CommKind::kSendRecv, 64e6, "0,31", 2), false) < 0.05);
}

TEST_CASE("where flows of one op share links unevenly, both backends charge it beyond the busiest link") {
  // Dragonfly all-to-all, one rank per router: flows limited by their global link (and, being
  // longer, weighted down by SimGrid's latency-based sharing) leave part of a busier local link
  // idle, so the op ends later than the busiest channel's load over its capacity. The analytical
  // backend shares each round max-min the same way; the bound is computed here from the flows.
  const topologies::Cluster c = cluster_of(kClusters[6]);
  for (double bytes : {64e3, 16e6, 256e6}) {
    const sim::CommOp op = op_on(c, sim::CommKind::kAllToAll, bytes, "spread", 8);
    sim::AnalyticalNetwork analytical(c, {});
    const sim::PlanChoice choice = analytical.planner().choose(op);
    REQUIRE(choice.plan->phases.size() == 1);
    std::map<sim::ChannelId, double> load;  // bytes per op byte
    for (const sim::Flow& f : choice.plan->phases[0].flows)
      for (sim::ChannelId ch : f.route) load[ch] += f.fraction * sim::wire_factor(choice.protocol, models::CollectiveParams{});
    double busiest = 0;
    for (const auto& [ch, l] : load) busiest = std::max(busiest, l / analytical.fabric().capacity(ch));
    const double t_bound = busiest * bytes;
    const double gap = signed_gap(c, op, true);
    CAPTURE(bytes);
    CHECK(std::fabs(gap) < 0.05);
    if (bytes >= 16e6) CHECK(choice.time_s > 1.03 * t_bound);  // the unfairness, not latency
  }
}

TEST_CASE("fast-forward gives the plain flow run's time: identical rounds of an op alone are credited, not re-run") {
  // Max-min sharing is time-invariant: a round of the same flows on an otherwise empty network
  // takes the same time whenever it starts, so crediting k identical rounds at once is exact up
  // to floating-point rounding of the clock (SimGrid's own precision is 1e-9 s per event).
  const topologies::Cluster c = cluster_of(kClusters[0]);
  for (const auto& [layout, ranks] : std::vector<std::pair<const char*, int>>{{"packed", 32}, {"spread", 4}, {"2x4", 8}}) {
    for (models::CollectiveAlgorithm a : {models::CollectiveAlgorithm::kRing, models::CollectiveAlgorithm::kTree}) {
      const sim::CommOp op = op_on(c, sim::CommKind::kAllReduce, 64e6, layout, ranks);
      sim::NetworkOptions o;
      o.algorithms.set(models::Collective::kAllReduce, a);
      o.fast_forward = false;
      sim::FlowNetwork plain(c, {}, o);
      o.fast_forward = true;
      sim::FlowNetwork fast(c, {}, o);
      const double t_plain = plain.duration(op, 0), t_fast = fast.duration(op, 0);
      const std::string algorithm(models::algorithm_name(a));
      CAPTURE(layout);
      CAPTURE(algorithm);
      CHECK(t_fast == exasim::testing::approx(t_plain).epsilon(1e-9));
      CHECK(plain.stats().rounds_fast_forwarded == 0);
      if (a == models::CollectiveAlgorithm::kRing) CHECK(fast.stats().rounds_fast_forwarded > 0);
      CHECK(fast.stats().rounds + fast.stats().rounds_fast_forwarded == plain.stats().rounds);
    }
  }
}
