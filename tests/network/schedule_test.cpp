// Collective algorithms as schedules of transfers, checked against the byte counts and step
// counts of their textbook definitions (Thakur, Rabenseifner & Gropp 2005; NCCL's ring, double
// binary tree and NVLS): what each member sends, and how many step latencies it pays.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <map>

#include "hw/error.hpp"

#include "models/collective/algorithm.hpp"

using namespace exasim::models;

namespace {

GroupLayout layout(int nodes, int per_node, bool nvls = false) {
  GroupLayout g;
  for (int a = 0; a < nodes; ++a)
    for (int b = 0; b < per_node; ++b) g.node.push_back(a), g.local.push_back(b);
  g.switch_reduction = nvls;
  return g;
}

Schedule build(CollectiveAlgorithm a, Collective op, const GroupLayout& g, std::vector<double> split = {}) {
  ScheduleRequest r;
  r.op = op;
  r.layout = &g;
  r.split = std::move(split);
  return build_schedule(a, r);
}

// Bytes (as fractions of the op's buffer) each endpoint sends over the whole schedule.
std::map<int, double> sent(const Schedule& s) {
  std::map<int, double> out;
  for (const Phase& p : s.phases)
    for (const Transfer& t : p.transfers) out[t.src] += t.fraction * p.repeat * p.wire_factor;
  return out;
}

double inter_node_bytes(const Schedule& s, const GroupLayout& g) {
  double sum = 0;
  for (const Phase& p : s.phases)
    for (const Transfer& t : p.transfers)
      if (t.src >= 0 && t.dst >= 0 && g.node[t.src] != g.node[t.dst]) sum += t.fraction * p.repeat;
  return sum;
}

}  // namespace

TEST_CASE("ring: every member sends 2(n-1)/n of the buffer for all-reduce, (n-1)/n for its halves") {
  for (auto [nodes, per] : {std::pair{1, 8}, {2, 4}, {4, 2}, {3, 1}}) {
    const GroupLayout g = layout(nodes, per);
    const double n = g.size();
    const Schedule ar = build(CollectiveAlgorithm::kRing, Collective::kAllReduce, g);
    CHECK(ar.latency_steps() == 2 * (g.size() - 1));
    for (const auto& [member, bytes] : sent(ar)) CHECK(bytes == exasim::testing::approx(2 * (n - 1) / n));
    for (Collective half : {Collective::kReduceScatter, Collective::kAllGather}) {
      const Schedule s = build(CollectiveAlgorithm::kRing, half, g);
      CHECK(s.latency_steps() == g.size() - 1);
      for (const auto& [member, bytes] : sent(s)) CHECK(bytes == exasim::testing::approx((n - 1) / n));
    }
  }
}

TEST_CASE("ring channels leave each node through every member, one per channel") {
  // 2 nodes x 4: 4 channels, each crossing each node boundary once per round: every member sends
  // exactly one inter-node flow per round.
  const GroupLayout g = layout(2, 4);
  const Schedule s = build(CollectiveAlgorithm::kRing, Collective::kAllReduce, g);
  std::map<int, int> crossing;
  for (const Transfer& t : s.phases[0].transfers)
    if (g.node[t.src] != g.node[t.dst]) ++crossing[t.src];
  CHECK(crossing.size() == 8);
  for (const auto& [m, n] : crossing) CHECK(n == 1);
}

TEST_CASE("ring broadcast and reduce: a pipelined chain, n-1 step latencies, the buffer once per hop") {
  const GroupLayout g = layout(1, 6);
  const Schedule b = build(CollectiveAlgorithm::kRing, Collective::kBroadcast, g);
  CHECK(b.latency_steps() == 5);
  CHECK(b.phases[0].transfers.size() == 5);
  for (const Transfer& t : b.phases[0].transfers) CHECK(t.fraction == exasim::testing::approx(1.0));
  const Schedule r = build(CollectiveAlgorithm::kRing, Collective::kReduce, g);
  for (const Transfer& t : r.phases[0].transfers) CHECK(t.dst != 5);  // toward root 0: the last member only sends
}

TEST_CASE("double binary tree: half the data per tree, each node's NICs carry the buffer once per pass") {
  for (int m : {2, 3, 4, 8, 16}) {
    const GroupLayout g = layout(m, 2);
    const Schedule s = build(CollectiveAlgorithm::kTree, Collective::kAllReduce, g);
    REQUIRE(s.phases.size() == 2);
    // Reduce pass: every node but a tree's root sends its half to its parent, in both trees.
    CHECK(inter_node_bytes(s, g) == exasim::testing::approx(2 * (m - 1) * 1.0));
    int depth = 0;
    for (int v = 1; v < m; v *= 2) ++depth;
    CHECK(s.phases[0].latency_steps <= depth + 1 + 1);  // tree levels + the 2-member chain
  }
}

TEST_CASE("recursive halving-doubling: 2(p-1)/p per member in log2(p) exchanges each way") {
  const GroupLayout g = layout(2, 4);
  const Schedule s = build(CollectiveAlgorithm::kHalvingDoubling, Collective::kAllReduce, g);
  CHECK(s.phases.size() == 6);
  for (const auto& [m, bytes] : sent(s)) CHECK(bytes == exasim::testing::approx(2 * 7.0 / 8));
  // The large first exchange (half the buffer) stays inside a node.
  for (const Transfer& t : s.phases[0].transfers) CHECK(g.node[t.src] == g.node[t.dst]);
  // Six members: two fold in first and out last.
  const GroupLayout six = layout(1, 6);
  const Schedule f = build(CollectiveAlgorithm::kHalvingDoubling, Collective::kAllReduce, six);
  CHECK(f.phases.front().transfers.size() == 2);
  CHECK(f.phases.back().transfers.size() == 2);
  CHECK_FALSE(algorithm_supports(CollectiveAlgorithm::kHalvingDoubling, Collective::kReduceScatter, six));
}

TEST_CASE("direct: every pair at once, all-to-all(v) follows its split") {
  const GroupLayout g = layout(1, 4);
  const Schedule a2a = build(CollectiveAlgorithm::kDirect, Collective::kAllToAll, g);
  CHECK(a2a.phases[0].transfers.size() == 12);
  for (const auto& [m, bytes] : sent(a2a)) CHECK(bytes == exasim::testing::approx(3.0 / 4));
  std::vector<double> split(16, 0.0);
  split[0 * 4 + 1] = 0.5;
  split[2 * 4 + 3] = 0.25;
  const Schedule v = build(CollectiveAlgorithm::kDirect, Collective::kAllToAll, g, split);
  CHECK(v.phases[0].transfers.size() == 2);
  const Schedule ar = build(CollectiveAlgorithm::kDirect, Collective::kAllReduce, g);
  CHECK(ar.latency_steps() == 2);
  for (const auto& [m, bytes] : sent(ar)) CHECK(bytes == exasim::testing::approx(2 * 3.0 / 4));
  const Schedule sr = build(CollectiveAlgorithm::kDirect, Collective::kSendRecv, layout(2, 1));
  REQUIRE(sr.phases[0].transfers.size() == 1);
  CHECK(sr.phases[0].transfers[0].fraction == 1.0);
}

TEST_CASE("hierarchical: intra-node reduce-scatter, one inter-node ring per rail on 1/k, intra-node all-gather") {
  const int m = 4, k = 8;
  const GroupLayout g = layout(m, k);
  const Schedule s = build(CollectiveAlgorithm::kHierarchical, Collective::kAllReduce, g);
  REQUIRE(s.phases.size() == 3);
  CHECK(s.phases[0].repeat == k - 1);
  CHECK(s.phases[1].repeat == 2 * (m - 1));
  // Inter-node: each member sends 2(m-1)/m of its 1/k shard.
  CHECK(inter_node_bytes(s, g) == exasim::testing::approx(m * k * 2.0 * (m - 1) / m / k));
  for (const Transfer& t : s.phases[1].transfers) CHECK(g.local[t.src] == g.local[t.dst]);  // rail-aligned
}

TEST_CASE("NVLS: each NVLink direction carries the buffer once, scaled by the multimem wire factor") {
  const GroupLayout g = layout(1, 8, true);
  ScheduleRequest r;
  r.op = Collective::kAllReduce;
  r.layout = &g;
  r.params.intra_efficiency = 0.8;
  r.params.nvls_efficiency = 0.6;
  const Schedule s = build_schedule(CollectiveAlgorithm::kNvls, r);
  REQUIRE(s.phases.size() == 1);
  CHECK(s.phases[0].wire_factor == exasim::testing::approx(0.8 / 0.6));
  double up = 0, down = 0;
  for (const Transfer& t : s.phases[0].transfers) (is_switch(t.dst) ? up : down) += t.fraction;
  CHECK(up == exasim::testing::approx(8.0));
  CHECK(down == exasim::testing::approx(8.0));
  CHECK_FALSE(algorithm_supports(CollectiveAlgorithm::kNvls, Collective::kAllReduce, layout(1, 8, false)));
}

TEST_CASE("the automatic choice considers NCCL's algorithms for each collective") {
  const auto one = auto_candidates(Collective::kAllReduce, layout(1, 8, true));
  CHECK(std::find(one.begin(), one.end(), CollectiveAlgorithm::kNvls) != one.end());
  CHECK(std::find(one.begin(), one.end(), CollectiveAlgorithm::kDirect) == one.end());  // NVSwitch: ring
  GroupLayout mesh = layout(1, 8);
  mesh.mesh = true;
  const auto xgmi = auto_candidates(Collective::kAllReduce, mesh);
  CHECK(std::find(xgmi.begin(), xgmi.end(), CollectiveAlgorithm::kDirect) != xgmi.end());
  const auto multi = auto_candidates(Collective::kAllReduce, layout(4, 8));
  CHECK(std::find(multi.begin(), multi.end(), CollectiveAlgorithm::kTree) != multi.end());
  CHECK(std::find(multi.begin(), multi.end(), CollectiveAlgorithm::kDirect) == multi.end());
  CHECK(auto_candidates(Collective::kAllToAll, layout(4, 8)) == std::vector{CollectiveAlgorithm::kDirect});
  CHECK(parse_algorithm("halving_doubling") == CollectiveAlgorithm::kHalvingDoubling);
  CHECK_THROWS_AS(parse_algorithm("rings"), exasim::ConfigError);
}
