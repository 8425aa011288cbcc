#include "sim/net/collective_plan.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "models/collective/algorithm.hpp"

namespace exasim::sim {

models::Collective to_collective(CommKind k) {
  switch (k) {
    case CommKind::kAllReduce: return models::Collective::kAllReduce;
    case CommKind::kReduceScatter: return models::Collective::kReduceScatter;
    case CommKind::kAllGather: return models::Collective::kAllGather;
    case CommKind::kAllToAll: return models::Collective::kAllToAll;
    case CommKind::kBroadcast: return models::Collective::kBroadcast;
    case CommKind::kSendRecv: return models::Collective::kSendRecv;
    case CommKind::kReduce: return models::Collective::kReduce;
  }
  return models::Collective::kAllReduce;
}

double wire_factor(models::Protocol p, const models::CollectiveParams& params) { return 1 / params.protocol_efficiency(p); }

double FlowPhase::transfer(double bytes) const {
  double t = 0;
  for (const ChannelLine& l : envelope) t = std::max(t, l.at(bytes));
  return t;
}

double phase_fill(const FlowPhase& phase, models::Protocol p, double bytes, const models::CollectiveParams& params) {
  if (params.pipeline_fill_rounds == 0) return 0;
  // Bytes only: the round's route latency is paid by its rounds.
  const double wire = bytes * wire_factor(p, params);
  return params.pipeline_fill_rounds * (phase.transfer(wire) - phase.transfer(0)) / phase.peers;
}

double PlannedOp::time(double bytes, models::Protocol p, const models::CollectiveParams& params) const {
  if (empty()) return 0;
  double t = start(p, params) + intra_steps * params.step_overhead(p, false) + inter_steps * params.step_overhead(p, true);
  const double wire = wire_factor(p, params) * bytes;
  for (const FlowPhase& ph : phases)
    t += ph.repeat * ((ph.latency_steps - 1) * ph.max_latency + ph.transfer(wire)) + phase_fill(ph, p, bytes, params);
  return t;
}

namespace {

// The lines that are the maximum somewhere on bytes >= 0, by increasing slope.
std::vector<ChannelLine> upper_envelope(std::vector<ChannelLine> lines) {
  std::vector<ChannelLine> out;
  if (lines.empty()) return out;
  // Start with the highest line at zero bytes (the steepest among equals), then repeatedly take
  // the steeper line that overtakes the current one first.
  auto first = std::max_element(lines.begin(), lines.end(), [](const ChannelLine& a, const ChannelLine& b) {
    return a.latency < b.latency || (a.latency == b.latency && a.seconds_per_byte < b.seconds_per_byte);
  });
  out.push_back(*first);
  for (;;) {
    const ChannelLine cur = out.back();
    double when = std::numeric_limits<double>::infinity();
    const ChannelLine* next = nullptr;
    for (const ChannelLine& l : lines) {
      if (l.seconds_per_byte <= cur.seconds_per_byte) continue;
      const double x = (cur.latency - l.latency) / (l.seconds_per_byte - cur.seconds_per_byte);
      if (x < when || (x == when && next && l.seconds_per_byte > next->seconds_per_byte)) when = x, next = &l;
    }
    if (next == nullptr) return out;
    out.push_back(*next);
  }
}

// Seconds per op byte until the last flow of a round ends when its flows share every channel
// the way the flow backend's SimGrid model shares them: weighted max-min (progressive filling),
// each flow's weight the inverse of its sharing penalty (route latency, plus weight-S over each
// link's bandwidth under LV08: the RTT unfairness of window-based transport), re-shared each
// time flows end. Equals the most loaded channel's load / capacity when that channel stays
// busy to the end; more when flows held back elsewhere leave it idle part of the time (e.g.
// all-to-all on a dragonfly: long flows through a global link get less than their share of a
// busier local link, which then idles while they finish).
double max_min_seconds_per_byte(const std::vector<Flow>& flows, const NetworkFabric& fabric, double weight_s) {
  // Compact channel indices, per-channel flow lists, and the groups of flows that share channels
  // (directly or through others): only those interact, and a flow alone ends by its own
  // bottleneck, never after the busiest channel's load / capacity.
  std::vector<ChannelId> channels;
  std::vector<std::vector<std::uint32_t>> route(flows.size());
  std::unordered_map<ChannelId, std::uint32_t> index;
  for (std::size_t f = 0; f < flows.size(); ++f) {
    for (ChannelId c : flows[f].route) {
      const auto [it, added] = index.emplace(c, static_cast<std::uint32_t>(channels.size()));
      if (added) channels.push_back(c);
      route[f].push_back(it->second);
    }
  }
  std::vector<std::vector<std::uint32_t>> on(channels.size());
  for (std::size_t f = 0; f < flows.size(); ++f)
    for (std::uint32_t c : route[f]) on[c].push_back(static_cast<std::uint32_t>(f));
  std::vector<std::uint32_t> parent(flows.size());
  std::iota(parent.begin(), parent.end(), 0u);
  auto root = [&](std::uint32_t f) {
    while (parent[f] != f) f = parent[f] = parent[parent[f]];
    return f;
  };
  for (const auto& fs : on)
    for (std::size_t i = 1; i < fs.size(); ++i) parent[root(fs[i])] = root(fs[0]);
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> groups;
  for (std::uint32_t f = 0; f < flows.size(); ++f)
    if (flows[f].fraction > 0 && !route[f].empty()) groups[root(f)].push_back(f);

  std::vector<double> left(flows.size()), rate(flows.size()), weight(flows.size());
  std::vector<double> cap(channels.size()), sum(channels.size());  // sum: the unfrozen flows' weights
  std::vector<char> alive(flows.size()), frozen(flows.size());
  for (std::size_t f = 0; f < flows.size(); ++f) {
    double penalty = flows[f].latency;
    for (ChannelId c : flows[f].route) penalty += weight_s / fabric.capacity(c);
    weight[f] = penalty > 0 ? 1 / penalty : 1;
  }
  double makespan = 0;
  std::vector<std::uint32_t> mine;  // the group's channels
  for (const auto& [g, members] : groups) {
    if (members.size() < 2) continue;
    mine.clear();
    for (std::uint32_t f : members)
      for (std::uint32_t c : route[f]) mine.push_back(c);
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    for (std::uint32_t f : members) left[f] = flows[f].fraction, alive[f] = 1;
    std::size_t n_alive = members.size();
    double t = 0;
    while (n_alive > 0) {
      for (std::uint32_t c : mine) cap[c] = fabric.capacity(channels[c]), sum[c] = 0;
      for (std::uint32_t f : members) {
        frozen[f] = !alive[f];
        if (alive[f])
          for (std::uint32_t c : route[f]) sum[c] += weight[f];
      }
      for (std::size_t unfrozen = n_alive; unfrozen > 0;) {
        std::uint32_t best = 0;
        double level = std::numeric_limits<double>::infinity();
        for (std::uint32_t c : mine)
          if (sum[c] > 0 && cap[c] / sum[c] < level) level = cap[c] / sum[c], best = c;
        for (std::uint32_t f : on[best]) {
          if (frozen[f]) continue;
          frozen[f] = 1, rate[f] = level * weight[f], --unfrozen;
          for (std::uint32_t c : route[f]) cap[c] = std::max(0.0, cap[c] - rate[f]), sum[c] -= weight[f];
        }
        sum[best] = 0;  // every flow on it is frozen (guards against rounding)
      }
      double dt = std::numeric_limits<double>::infinity();
      for (std::uint32_t f : members)
        if (alive[f]) dt = std::min(dt, left[f] / rate[f]);
      t += dt;
      for (std::uint32_t f : members) {
        if (!alive[f]) continue;
        left[f] -= rate[f] * dt;
        if (left[f] <= 1e-9 * flows[f].fraction) alive[f] = 0, --n_alive;
      }
    }
    makespan = std::max(makespan, t);
  }
  return makespan;
}

}  // namespace

double round_delay(const PlannedOp& plan, const FlowPhase& phase, models::Protocol p,
                   const models::CollectiveParams& params) {
  const double overhead = plan.p2p ? 0 : params.step_overhead(p, phase.crosses_nodes);
  return phase.latency_steps * overhead + (phase.latency_steps - 1) * phase.max_latency;
}

CollectivePlanner::CollectivePlanner(NetworkFabric& fabric, NetworkOptions options)
    : fabric_(fabric),
      options_(std::move(options)),
      load_(fabric.channel_count(), 0.0),
      first_latency_(fabric.channel_count(), 0.0) {}

// The same op on the other GPU positions of its nodes: ranks shifted by j within their node,
// kept when disjoint from the copies so far (a group that fills its nodes has no copy).
std::vector<std::vector<std::uint32_t>> CollectivePlanner::copies_of(const std::vector<std::uint32_t>& ranks) const {
  std::vector<std::vector<std::uint32_t>> out{ranks};
  if (!options_.symmetric_copies) return out;
  const auto g = static_cast<std::uint32_t>(fabric_.cluster().gpus_per_node);
  std::unordered_set<std::uint32_t> used(ranks.begin(), ranks.end());
  for (std::uint32_t j = 1; j < g; ++j) {
    std::vector<std::uint32_t> shifted;
    for (std::uint32_t r : ranks) shifted.push_back(r / g * g + (r % g + j) % g);
    if (std::any_of(shifted.begin(), shifted.end(), [&](std::uint32_t r) { return used.count(r) > 0; })) continue;
    used.insert(shifted.begin(), shifted.end());
    out.push_back(std::move(shifted));
  }
  return out;
}

CollectivePlanner::Group& CollectivePlanner::group(const CommOp& op) {
  key_.clear();
  auto append = [this](const void* p, std::size_t n) { key_.append(static_cast<const char*>(p), n); };
  append(&op.kind, sizeof op.kind);
  append(&op.root, sizeof op.root);
  append(op.ranks.data(), op.ranks.size() * sizeof(std::uint32_t));
  append(op.split.data(), op.split.size() * sizeof(double));
  if (auto it = groups_.find(key_); it != groups_.end()) return *it->second;
  auto g = std::make_unique<Group>();
  g->layout = fabric_.layout(op.ranks);
  g->copies = copies_of(op.ranks);
  g->candidates = models::auto_candidates(to_collective(op.kind), g->layout);
  return *groups_.emplace(key_, std::move(g)).first->second;
}

std::vector<models::CollectiveAlgorithm> CollectivePlanner::candidates(const CommOp& op) { return group(op).candidates; }

const PlannedOp& CollectivePlanner::plan_in(Group& g, const CommOp& op, models::CollectiveAlgorithm a) {
  if (auto it = g.plans.find(a); it != g.plans.end()) return it->second;
  return g.plans.emplace(a, build(g, op, a)).first->second;
}

const PlannedOp& CollectivePlanner::plan(const CommOp& op, models::CollectiveAlgorithm algorithm) {
  return plan_in(group(op), op, algorithm);
}

PlanChoice CollectivePlanner::best_protocol(const PlannedOp& plan, double bytes) const {
  const models::CollectiveParams& params = fabric_.params();
  PlanChoice c{&plan, models::Protocol::kSimple, plan.time(bytes, models::Protocol::kSimple, params)};
  if (!plan.ll_allowed) return c;
  for (models::Protocol p : models::kAllProtocols) {
    const double t = plan.time(bytes, p, params);
    if (t < c.time_s) c.protocol = p, c.time_s = t;
  }
  return c;
}

PlanChoice CollectivePlanner::choose(const CommOp& op) {
  Group& g = group(op);
  const models::Collective kind = to_collective(op.kind);
  const models::CollectiveAlgorithm wanted = options_.algorithms[kind];
  // A forced algorithm applies where it can run; other groups keep the automatic choice.
  if (wanted != models::CollectiveAlgorithm::kAuto && models::algorithm_supports(wanted, kind, g.layout))
    return best_protocol(plan_in(g, op, wanted), op.bytes);
  static const PlannedOp nothing;  // a group with nothing to communicate
  PlanChoice best{&nothing, models::Protocol::kSimple, std::numeric_limits<double>::infinity()};
  for (models::CollectiveAlgorithm a : g.candidates) {
    const PlanChoice c = best_protocol(plan_in(g, op, a), op.bytes);
    if (c.time_s < best.time_s) best = c;
  }
  if (best.plan == &nothing) best.time_s = 0;
  return best;
}

PlannedOp CollectivePlanner::build(const Group& g, const CommOp& op, models::CollectiveAlgorithm a) {
  models::ScheduleRequest req;
  req.op = to_collective(op.kind);
  req.layout = &g.layout;
  req.params = fabric_.params();
  req.split = op.split;
  req.root = static_cast<int>(op.root);
  models::Schedule schedule = models::build_schedule(a, req);
  // Reduce-copy kernels move bytes slower than plain copies (NVLS reduces in the switch).
  const bool reduces = req.op == models::Collective::kAllReduce || req.op == models::Collective::kReduceScatter ||
                       req.op == models::Collective::kReduce;
  if (reduces && a != models::CollectiveAlgorithm::kNvls)
    for (models::Phase& phase : schedule.phases) phase.wire_factor /= fabric_.params().reduction_efficiency;
  PlannedOp p;
  p.algorithm = a;
  p.p2p = op.kind == CommKind::kSendRecv;
  p.ll_allowed = a != models::CollectiveAlgorithm::kNvls && !p.p2p;
  for (const models::Phase& phase : schedule.phases) {
    FlowPhase fp;
    place_phase(g, phase, fp);
    if (fp.flows.empty()) continue;
    // A direct round sends to every peer at once: its fill is one peer's share of it.
    if (a == models::CollectiveAlgorithm::kDirect) fp.peers = std::max(1, g.layout.size() - 1);
    // Through the switch (NVLS), each member reduces and multicasts its 1/k slice of the buffer
    // (NCCL's multimem load-reduce and store): one slice is its share, as one peer's is a ring's.
    if (a == models::CollectiveAlgorithm::kNvls && !fp.crosses_nodes)
      fp.peers = static_cast<double>(g.layout.by_node().front().size());
    const double steps = static_cast<double>(fp.repeat) * fp.latency_steps;
    if (!p.p2p) (fp.crosses_nodes ? p.inter_steps : p.intra_steps) += steps;
    p.flows += static_cast<std::uint64_t>(fp.repeat) * fp.flows.size();
    p.phases.push_back(std::move(fp));
  }
  return p;
}

// Puts a schedule phase on the topology: one flow per transfer and copy, and the round's
// bottleneck: the channel whose load (bytes per op byte) over capacity is largest.
void CollectivePlanner::place_phase(const Group& g, const models::Phase& phase, FlowPhase& out) {
  out.repeat = phase.repeat;
  out.latency_steps = phase.latency_steps;
  bool crosses = false;
  for (const auto& ranks : g.copies) {
    auto endpoint = [&](int e) {
      return models::is_switch(e) ? fabric_.node_switch(ranks[models::member_of_switch(e)]) : fabric_.gpu(ranks[e]);
    };
    for (const models::Transfer& t : phase.transfers) {
      const Vertex src = endpoint(t.src), dst = endpoint(t.dst);
      if (src == dst) continue;
      const int ns = g.layout.node[models::is_switch(t.src) ? models::member_of_switch(t.src) : t.src];
      const int nd = g.layout.node[models::is_switch(t.dst) ? models::member_of_switch(t.dst) : t.dst];
      crosses = crosses || ns != nd;
      Flow f{src, dst, t.fraction * phase.wire_factor, fabric_.route(src, dst), 0};
      f.latency = fabric_.route_latency(f.route);
      out.max_latency = std::max(out.max_latency, f.latency);
      for (ChannelId c : f.route) {
        if (load_[c] == 0) {
          touched_.push_back(c);
          first_latency_[c] = f.latency;
        }
        load_[c] += f.fraction;
        first_latency_[c] = std::min(first_latency_[c], f.latency);
      }
      out.flows.push_back(f);
    }
  }
  out.crosses_nodes = crosses;
  std::vector<ChannelLine> lines;
  lines.reserve(touched_.size());
  for (ChannelId c : touched_) {
    lines.push_back({first_latency_[c], load_[c] / fabric_.capacity(c)});
    out.seconds_per_byte = std::max(out.seconds_per_byte, lines.back().seconds_per_byte);
    load_[c] = 0;
  }
  touched_.clear();
  // Max-min sharing inside the round: its flows start after their route latencies, the fastest first.
  double shortest = std::numeric_limits<double>::infinity();
  for (const Flow& f : out.flows) shortest = std::min(shortest, f.latency);
  if (!out.flows.empty()) {
    const double shared = max_min_seconds_per_byte(out.flows, fabric_, flow_weight_s(options_.flow_model));
    if (shared > out.seconds_per_byte * (1 + 1e-9)) {  // not where the busiest channel stays busy (rounding)
      lines.push_back({shortest, shared});
      out.seconds_per_byte = shared;
    }
  }
  out.envelope = upper_envelope(std::move(lines));
}

}  // namespace exasim::sim
