// Network backends' speed: analytical collective predictions per second, routes on a 16,384-GPU
// fat-tree, and the flow backend (SimGrid) on a 1 GiB all-reduce over 1024 GPUs (128 DGX A100
// nodes, fat-tree): wall time and flows simulated per second, with the automatic algorithm
// choice and with the ring forced (fast-forward on: exact, see tests/network). Prints one line
// per measurement; always exits 0.
//   exasim-network-bench [--full]   --full adds the 1024-GPU ring without fast-forward (minutes)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "sim/net/analytical_network.hpp"
#include "sim/net/flow_network.hpp"
#include "sim/net/group_placement.hpp"
#include "topologies/routing.hpp"
#include "workloads/scenario/scenario.hpp"

using namespace exasim;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

topologies::Cluster dgx_cluster(const hw::Catalog& catalog, int nodes) {
  return workloads::read_cluster(
      config::load_string("{node: dgx-a100, nodes: " + std::to_string(nodes) + "}", "<bench>"), catalog);
}

// Predictions of ops on groups the planner has seen (the planner's inner loop and the engine
// ask for the same groups again and again with other sizes).
void analytical_rate(const topologies::Cluster& c) {
  sim::AnalyticalNetwork net(c, {});
  const std::vector<std::pair<std::string, int>> groups = {
      {"packed", 8}, {"2x8", 16}, {"spread", 128}, {"16x8", 128}, {"packed", 1024}};
  std::vector<sim::CommOp> ops;
  for (const auto& [layout, ranks] : groups) {
    for (sim::CommKind k : {sim::CommKind::kAllReduce, sim::CommKind::kAllGather, sim::CommKind::kReduceScatter})
      ops.emplace_back(k, 1e6, sim::place_group(layout, ranks, c));
  }
  const auto plan0 = Clock::now();
  for (const sim::CommOp& op : ops) net.cost(op);
  const double plan_s = seconds_since(plan0);
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> size(1e3, 1e10);
  for (std::size_t small_only = 0; small_only < 2; ++small_only) {
    const std::size_t count = small_only ? 9 : ops.size();  // the groups of up to 128 ranks
    const int n = 2'000'000;
    double sink = 0;
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      sim::CommOp& op = ops[static_cast<std::size_t>(i) % count];
      op.bytes = size(rng);
      sink += net.cost(op).time_s;
    }
    const double s = seconds_since(t0);
    std::printf("analytical: %s: %d predictions in %.3f s = %.2f M predictions/s (checksum %.3g)\n",
                small_only ? "groups of 8-128 ranks" : "groups of 8-1024 ranks", n, s, n / s / 1e6, sink);
  }
  std::printf("analytical: first plans of %zu ops (routes, schedules for every candidate algorithm): %.3f s\n",
              ops.size(), plan_s);
}

// Routes a 16,384-GPU job needs (Llama 3.1 405B on 2048 DGX H100 nodes, 3-tier fat-tree): every
// GPU's route to the same local GPU of the next node (its DP ring neighbour) and to a GPU
// half the cluster away.
void routing_rate(const hw::Catalog& catalog) {
  const topologies::Cluster c = workloads::read_cluster(
      config::load_string("{node: dgx-h100, nodes: 2048, inter_node: {topology: fat-tree, nic: ib-ndr-400, nics_per_node: 8}}",
                          "<bench>"),
      catalog);
  auto t0 = Clock::now();
  const topologies::Topology t = topologies::build_topology(c);
  const double build_s = seconds_since(t0);
  t0 = Clock::now();
  topologies::Router router(t);
  const double router_s = seconds_since(t0);
  t0 = Clock::now();
  std::size_t hops = 0;
  const int n = t.gpu_count();
  for (int r = 0; r < n; ++r) {
    hops += router.route(t.gpu(r), t.gpu((r + 8) % n)).size();
    hops += router.route(t.gpu(r), t.gpu((r + n / 2) % n)).size();
  }
  const double route_s = seconds_since(t0);
  std::printf(
      "routing: %d GPUs, %zu vertices (%zu in the core): topology %.3f s, router %.3f s, %d routes in %.3f s = %.0f routes/s "
      "(%.2f hops each)\n",
      n, t.vertex_count(), router.core_size(), build_s, router_s, 2 * n, route_s, 2 * n / route_s, double(hops) / (2 * n));
}

void flow_run(const topologies::Cluster& c, const std::string& label, models::CollectiveAlgorithm a, bool fast_forward) {
  sim::NetworkOptions o;
  o.algorithms.set(models::Collective::kAllReduce, a);
  o.fast_forward = fast_forward;
  const sim::CommOp op(sim::CommKind::kAllReduce, 1073741824.0, sim::place_group("packed", c.gpu_count(), c));
  sim::AnalyticalNetwork analytical(c, {}, o);
  const models::CollectiveCost expect = analytical.cost(op);
  sim::FlowNetwork flow(c, {}, o);
  const auto t0 = Clock::now();
  const double t = flow.duration(op, 0);
  const double wall = seconds_since(t0);
  const sim::FlowStats& st = flow.stats();
  std::printf(
      "flow: %s, %d GPUs, 1 GiB all-reduce, %s%s: simulated %.3f ms (analytical %.3f ms), wall %.2f s, %llu flows in "
      "%llu rounds = %.0f flows/s",
      label.c_str(), c.gpu_count(), std::string(models::algorithm_name(expect.algorithm)).c_str(),
      fast_forward ? "" : ", no fast-forward", t * 1e3, expect.time_s * 1e3, wall,
      static_cast<unsigned long long>(st.flows), static_cast<unsigned long long>(st.rounds), static_cast<double>(st.flows) / wall);
  if (st.rounds_fast_forwarded > 0)
    std::printf(" (+ %llu identical rounds, %llu flows, fast-forwarded)", static_cast<unsigned long long>(st.rounds_fast_forwarded),
                static_cast<unsigned long long>(st.flows_fast_forwarded));
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const bool full = argc > 1 && std::strcmp(argv[1], "--full") == 0;
  const hw::Catalog catalog = hw::Catalog::load(hw::default_configs_dir());
  const topologies::Cluster big = dgx_cluster(catalog, 128);
  analytical_rate(big);
  routing_rate(catalog);
  flow_run(big, "128 nodes", models::CollectiveAlgorithm::kAuto, true);
  flow_run(big, "128 nodes", models::CollectiveAlgorithm::kRing, true);
  flow_run(big, "128 nodes", models::CollectiveAlgorithm::kHierarchical, false);
  flow_run(dgx_cluster(catalog, 32), "32 nodes", models::CollectiveAlgorithm::kRing, false);
  if (full) flow_run(big, "128 nodes", models::CollectiveAlgorithm::kRing, false);
  return 0;
}
