#include "models/collective/collective_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace exasim::models {

namespace {

struct Link {
  double bandwidth;  // achieved B/s
  double latency;    // s per step, software overhead included
};

Link intra_link(const GroupLinks& l, const CollectiveParams& p) {
  return {l.intra_bandwidth * p.intra_efficiency, l.intra_latency + p.step_overhead_s};
}

Link inter_link(const GroupLinks& l, const CollectiveParams& p) {
  return {l.inter_bandwidth * p.inter_efficiency, l.inter_latency + p.inter_step_overhead_s};
}

// A ring over the whole group: every step is limited by the slowest hop. The hops that leave a
// node carry the whole ring's traffic through the NICs of the group's ranks on that node, so
// the cross-node bandwidth per ring is ranks_per_node x the per-GPU NIC share.
Link ring_link(GroupShape g, const GroupLinks& l, const CollectiveParams& p) {
  const Link in = intra_link(l, p);
  if (g.nodes() <= 1) return in;
  const Link out = inter_link(l, p);
  const double cross = out.bandwidth * g.ranks_per_node;
  const double bw = g.ranks_per_node > 1 ? std::min(in.bandwidth, cross) : cross;
  return {bw, std::max(in.latency, out.latency)};
}

// Time of `steps` ring steps that each move `chunk` bytes, and the phase's pipeline fill (the
// engine's phase_fill, sim/net/collective_plan.hpp).
double ring_steps(double steps, double chunk, Link link, double fill_rounds) {
  return steps * (link.latency + chunk / link.bandwidth) + fill_rounds * chunk / link.bandwidth;
}

double ring_time(Collective op, double bytes, GroupShape g, Link link, double fill) {
  const double n = g.ranks;
  switch (op) {
    case Collective::kAllReduce: return ring_steps(2 * (n - 1), bytes / n, link, fill);
    case Collective::kReduceScatter:
    case Collective::kAllGather: return ring_steps(n - 1, bytes / n, link, fill);
    case Collective::kBroadcast:
    case Collective::kReduce: return ring_steps(n - 1, 0, link, 0) + (1 + fill) * bytes / link.bandwidth;  // pipelined
    default: return std::numeric_limits<double>::infinity();
  }
}

// Intra-node reduce-scatter, inter-node collective on each shard (the ranks of a node work on
// their shards at once, each through its NIC share), intra-node all-gather.
double hierarchical_time(Collective op, double bytes, GroupShape g, const GroupLinks& l, const CollectiveParams& p) {
  const int k = g.ranks_per_node;
  const int m = g.nodes();
  if (k <= 1 || m <= 1) return std::numeric_limits<double>::infinity();
  const Link in = intra_link(l, p);
  const Link out = inter_link(l, p);
  const double fill = p.pipeline_fill_rounds;
  const double intra_phase = ring_steps(k - 1, bytes / k, in, fill);
  const double shard = bytes / k;
  switch (op) {
    case Collective::kAllReduce: return 2 * intra_phase + ring_steps(2.0 * (m - 1), shard / m, out, fill);
    case Collective::kReduceScatter:
    case Collective::kAllGather: return intra_phase + ring_steps(m - 1, shard / m, out, fill);
    default: return std::numeric_limits<double>::infinity();
  }
}

// Double binary tree: latency grows with log2(n); bandwidth is half the ring's per direction
// cost for all-reduce (reduce up, broadcast down, pipelined).
double tree_time(Collective op, double bytes, GroupShape g, Link link) {
  if (op != Collective::kAllReduce || g.ranks <= 2) return std::numeric_limits<double>::infinity();
  const double depth = std::ceil(std::log2(static_cast<double>(g.ranks)));
  return 2 * depth * link.latency + 2 * bytes / link.bandwidth;
}

double all_to_all_time(double bytes, GroupShape g, const GroupLinks& l, const CollectiveParams& p) {
  const double n = g.ranks;
  const double k = std::min(g.ranks_per_node, g.ranks);
  const Link in = intra_link(l, p);
  const Link out = inter_link(l, p);
  // One round to every peer; the fill is one peer's share (bytes / n).
  const double fill = p.pipeline_fill_rounds / (n - 1);
  const double intra = (1 + fill) * bytes * (k - 1) / n / in.bandwidth;
  const double inter = g.nodes() > 1 ? (1 + fill) * bytes * (n - k) / n / out.bandwidth : 0;
  return (n - 1) * std::max(in.latency, g.nodes() > 1 ? out.latency : in.latency) + std::max(intra, inter);
}

// The parameters as protocol p sees them (what the network backends apply per protocol,
// sim/net/collective_plan.cpp): its share of each link's rate, its step latencies, and its base
// latency with the launch.
CollectiveParams as_protocol(const CollectiveParams& params, Protocol p) {
  CollectiveParams q = params;
  const double e = params.protocol_efficiency(p);
  q.intra_efficiency *= e, q.inter_efficiency *= e;
  q.step_overhead_s = params.step_overhead(p, false);
  q.inter_step_overhead_s = params.step_overhead(p, true);
  q.launch_overhead_s += params.base_latency(p);
  return q;
}

CollectiveCost one_protocol_cost(Collective op, double bytes, GroupShape g, const GroupLinks& links,
                                 const CollectiveParams& params, CollectiveAlgorithm algorithm) {
  CollectiveCost c;
  if (g.ranks <= 1 && op != Collective::kSendRecv) {
    c.algorithm = CollectiveAlgorithm::kRing;
    return c;  // nothing to communicate
  }
  const Link ring = ring_link(g, links, params);
  if (op == Collective::kSendRecv) {
    const Link path = g.nodes() > 1 ? inter_link(links, params) : intra_link(links, params);
    c.time_s = path.latency + bytes / path.bandwidth;
    c.algorithm = CollectiveAlgorithm::kRing;
  } else if (op == Collective::kAllToAll) {
    c.time_s = all_to_all_time(bytes, g, links, params);
    c.algorithm = CollectiveAlgorithm::kRing;
  } else {
    const double t_ring = ring_time(op, bytes, g, ring, params.pipeline_fill_rounds);
    const double t_hier = hierarchical_time(op, bytes, g, links, params);
    const double t_tree = tree_time(op, bytes, g, ring);
    switch (algorithm) {
      case CollectiveAlgorithm::kRing: c.time_s = t_ring; c.algorithm = algorithm; break;
      case CollectiveAlgorithm::kHierarchical: c.time_s = t_hier; c.algorithm = algorithm; break;
      case CollectiveAlgorithm::kTree: c.time_s = t_tree; c.algorithm = algorithm; break;
      default: c.time_s = std::numeric_limits<double>::infinity(); c.algorithm = algorithm; break;
      case CollectiveAlgorithm::kAuto:  // as NCCL's tuner: the fastest of its algorithms for this size and shape
        // Ring or tree, as the engine's automatic choice (models::auto_candidates): NCCL has no
        // hierarchical all-reduce, reduce-scatter or all-gather of its own, so it is costed only
        // when asked for. (Choosing it here made the planner's data-parallel estimates up to 38%
        // faster than the engine on nodes with fewer NICs than GPUs.)
        c.time_s = t_ring;
        c.algorithm = CollectiveAlgorithm::kRing;
        if (t_tree < c.time_s) c.time_s = t_tree, c.algorithm = CollectiveAlgorithm::kTree;
        break;
    }
  }
  if (std::isfinite(c.time_s)) c.time_s += params.launch_overhead_s;
  return c;
}

}  // namespace

CollectiveCost collective_cost(Collective op, double bytes, GroupShape g, const GroupLinks& links,
                               const CollectiveParams& params, CollectiveAlgorithm algorithm) {
  // Send/recv runs NCCL's p2p path, Simple only; the collectives the fastest protocol.
  const bool p2p = op == Collective::kSendRecv;
  CollectiveCost c = one_protocol_cost(op, bytes, g, links, p2p ? params : as_protocol(params, Protocol::kSimple), algorithm);
  if (!p2p && g.ranks > 1)
    for (Protocol p : {Protocol::kLL128, Protocol::kLL}) {
      const CollectiveCost o = one_protocol_cost(op, bytes, g, links, as_protocol(params, p), algorithm);
      if (o.time_s < c.time_s) c = o;
    }
  if (c.time_s > 0 && std::isfinite(c.time_s)) {
    c.algorithm_bandwidth = bytes / c.time_s;
    c.bus_bandwidth = c.algorithm_bandwidth * bus_factor(op, g.ranks);
  }
  return c;
}

}  // namespace exasim::models
