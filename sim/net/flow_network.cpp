#include "sim/net/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <queue>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "sim/net/analytical_network.hpp"
#include "sim/net/simgrid_platform.hpp"

namespace exasim::sim {

namespace sg4 = simgrid::s4u;

namespace {

// An op in progress: which round of which phase, and that round's flows.
struct ActiveOp {
  const PlannedOp* plan = nullptr;
  models::Protocol protocol = models::Protocol::kSimple;
  std::uint32_t token = 0;
  double bytes = 0;
  std::size_t phase = 0;
  int round = 0;
  std::vector<sg4::CommPtr> flows;
  std::size_t cursor = 0;  // flows before it have finished
  Time round_started = 0;   // when the current round's flows started
  bool alone = false;       // no other flow was in flight when they started
  std::uint64_t epoch = 0;  // network activity counter then (unchanged: still alone)
};

// A round due to start (after its step latencies), ordered by (time, sequence).
struct Timer {
  Time time;
  std::uint64_t seq;
  std::size_t slot;
  bool operator>(const Timer& o) const { return time > o.time || (time == o.time && seq > o.seq); }
};

bool due(Time t, Time now) { return t <= now + 1e-12 * std::max(1.0, std::abs(now)); }

}  // namespace

struct FlowNetwork::Impl {
  Impl(const topologies::Cluster& c, const models::CollectiveParams& p, NetworkOptions o)
      : fabric(c, p), planner(fabric, std::move(o)) {}

  Time now() const { return sg4::Engine::get_clock() - t0; }
  // Before a round: its step latencies, and before a phase's first round the phase's fill.
  Time delay(const ActiveOp& op) const {
    const FlowPhase& phase = op.plan->phases[op.phase];
    const Time d = round_delay(*op.plan, phase, op.protocol, fabric.params());
    return op.round == 0 ? d + phase_fill(phase, op.protocol, op.bytes, fabric.params()) : d;
  }
  void schedule(std::size_t slot, Time at) { timers.push({at, seq++, slot}); }
  void start_round(std::size_t slot, Time t);
  bool settle(std::size_t slot, Time t, Time limit, bool others, std::vector<std::uint32_t>& done);
  void fast_forward(ActiveOp& op, std::size_t slot, Time t, Time limit, Time round_time);
  Time advance(Time limit, std::vector<std::uint32_t>& done);

  NetworkFabric fabric;
  CollectivePlanner planner;
  FlowStats stats;
  std::set<Vertex> endpoints;
  std::set<std::pair<Vertex, Vertex>> pairs;
  std::set<const PlannedOp*> prepared;  // plans whose routes the platform has
  std::unique_ptr<SimgridPlatform> platform;
  Time t0 = 0;
  std::vector<std::unique_ptr<ActiveOp>> slots;
  std::vector<std::size_t> free_slots;
  std::vector<std::size_t> in_flight;  // slots whose current round has flows in SimGrid
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers;
  std::vector<std::uint32_t> ended_at_start;  // ops with nothing to send
  std::uint64_t seq = 0;
  std::uint64_t epoch = 0;  // counts op and round starts
  std::vector<sg4::CommPtr> watch;
  std::vector<std::size_t> watch_slot;
};

void FlowNetwork::Impl::start_round(std::size_t slot, Time t) {
  ActiveOp& op = *slots[slot];
  const FlowPhase& phase = op.plan->phases[op.phase];
  op.flows.clear();
  op.cursor = 0;
  op.round_started = t;
  op.alone = in_flight.empty();
  op.epoch = ++epoch;
  const double wire = wire_factor(op.protocol, fabric.params());
  for (const Flow& f : phase.flows) {
    const auto bytes = static_cast<std::uint64_t>(std::llround(std::max(0.0, f.fraction * wire * op.bytes)));
    op.flows.push_back(sg4::Comm::sendto_async(platform->host(f.src), platform->host(f.dst), bytes));
  }
  stats.flows += phase.flows.size();
  ++stats.rounds;
  in_flight.push_back(slot);
}

// Skips the finished flows of a slot's round; when all have finished, moves the op to its next
// round (or ends it: its token goes to `done`). Returns whether the round is still in flight.
// `others`: another op has flows in flight or a round due.
bool FlowNetwork::Impl::settle(std::size_t slot, Time t, Time limit, bool others, std::vector<std::uint32_t>& done) {
  ActiveOp& op = *slots[slot];
  while (op.cursor < op.flows.size() && op.flows[op.cursor]->get_state() == sg4::Activity::State::FINISHED) ++op.cursor;
  if (op.cursor < op.flows.size()) return true;
  op.flows.clear();
  const bool alone_throughout = op.alone && op.epoch == epoch && !others;
  const Time round_time = t - op.round_started;
  if (++op.round == op.plan->phases[op.phase].repeat) {
    op.round = 0;
    ++op.phase;
  }
  if (op.phase == op.plan->phases.size()) {
    done.push_back(op.token);
    slots[slot].reset();
    free_slots.push_back(slot);
    return false;
  }
  if (alone_throughout && op.round > 0 && planner.options().fast_forward) {
    fast_forward(op, slot, t, limit, round_time);
  } else {
    schedule(slot, t + delay(op));
  }
  return false;
}

// An op that ran a whole round with nothing else on the network runs the identical rounds left
// in its phase identically as long as nothing else starts: the engine starts nothing before
// `limit`, so every round that would end by then is credited without simulating it again. The
// last round of the phase always runs in SimGrid.
void FlowNetwork::Impl::fast_forward(ActiveOp& op, std::size_t slot, Time t, Time limit, Time round_time) {
  const Time step = delay(op) + round_time;
  const long left = op.plan->phases[op.phase].repeat - op.round - 1;
  long k = left;
  if (limit != kNever && step > 0) k = std::min<long>(k, static_cast<long>(std::floor((limit - t) / step)));
  k = std::max<long>(k, 0);
  op.round += static_cast<int>(k);
  stats.rounds_fast_forwarded += static_cast<std::uint64_t>(k);
  stats.flows_fast_forwarded += static_cast<std::uint64_t>(k) * op.plan->phases[op.phase].flows.size();
  schedule(slot, t + static_cast<double>(k) * step + delay(op));
}

Time FlowNetwork::Impl::advance(Time limit, std::vector<std::uint32_t>& done) {
  for (;;) {
    const Time t = now();
    if (!ended_at_start.empty()) {
      done.insert(done.end(), ended_at_start.begin(), ended_at_start.end());
      ended_at_start.clear();
      return t;
    }
    while (!timers.empty() && due(timers.top().time, t)) {
      const std::size_t slot = timers.top().slot;
      timers.pop();
      start_round(slot, t);
    }
    watch.clear();
    watch_slot.clear();
    const bool others = in_flight.size() > 1 || !timers.empty();
    std::erase_if(in_flight, [&](std::size_t slot) { return !settle(slot, t, limit, others, done); });
    if (!done.empty()) return t;
    for (std::size_t slot : in_flight) {
      watch.push_back(slots[slot]->flows[slots[slot]->cursor]);
      watch_slot.push_back(slot);
    }
    const Time next_timer = timers.empty() ? kNever : timers.top().time;
    if (!timers.empty() && due(next_timer, t)) continue;  // a round became due while settling
    const Time horizon = std::min(limit, next_timer);
    if (due(horizon, t) && horizon == limit) return limit;
    if (watch.empty()) {
      if (horizon == kNever) return t;  // nothing in flight, nothing due
      sg4::this_actor::sleep_until(t0 + horizon);
      if (horizon == limit) return limit;
      continue;
    }
    const double timeout = horizon == kNever ? -1.0 : std::max(0.0, horizon - t);
    if (sg4::Comm::wait_any_for(watch, timeout) < 0 && horizon == limit) return limit;
  }
}

FlowNetwork::FlowNetwork(const topologies::Cluster& cluster, const models::CollectiveParams& params,
                         NetworkOptions options)
    : impl_(std::make_unique<Impl>(cluster, params, std::move(options))) {}

FlowNetwork::~FlowNetwork() = default;

const FlowStats& FlowNetwork::stats() const { return impl_->stats; }
CollectivePlanner& FlowNetwork::planner() { return impl_->planner; }

void FlowNetwork::prepare(const std::vector<CommOp>& ops) {
  for (const CommOp& op : ops) {
    const PlannedOp* plan = impl_->planner.choose(op).plan;
    impl_->prepared.insert(plan);
    for (const FlowPhase& phase : plan->phases) {
      for (const Flow& f : phase.flows) {
        impl_->endpoints.insert(f.src);
        impl_->endpoints.insert(f.dst);
        impl_->pairs.emplace(f.src, f.dst);
      }
    }
  }
}

void FlowNetwork::run(const std::function<void()>& loop) {
  Impl& m = *impl_;
  const std::vector<Vertex> endpoints(m.endpoints.begin(), m.endpoints.end());
  const std::vector<std::pair<Vertex, Vertex>> pairs(m.pairs.begin(), m.pairs.end());
  m.platform = std::make_unique<SimgridPlatform>(m.fabric, m.planner.options().flow_model, endpoints, pairs);
  std::exception_ptr failure;
  sg4::Actor::create("exasim-engine", m.platform->driver_host(), [&] {
    m.t0 = sg4::Engine::get_clock();
    try {
      loop();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  m.platform->engine().run();
  // Drop every SimGrid object before the engine goes.
  m.slots.clear();
  m.free_slots.clear();
  m.in_flight.clear();
  m.watch.clear();
  m.timers = {};
  m.platform.reset();
  if (failure) std::rethrow_exception(failure);
}

void FlowNetwork::start(const CommOp& op, std::uint32_t token, Time now) {
  Impl& m = *impl_;
  const PlanChoice choice = m.planner.choose(op);
  const PlannedOp& plan = *choice.plan;
  if (!plan.empty() && !m.prepared.contains(&plan))
    throw std::logic_error("FlowNetwork: an op was started that prepare() did not see (its routes are not in the platform)");
  ++m.stats.ops;
  ++m.epoch;
  if (plan.empty()) {
    m.ended_at_start.push_back(token);
    return;
  }
  auto active = std::make_unique<ActiveOp>();
  active->plan = &plan;
  active->protocol = choice.protocol;
  active->token = token;
  active->bytes = op.bytes;
  std::size_t slot = m.slots.size();
  if (!m.free_slots.empty()) {
    slot = m.free_slots.back();
    m.free_slots.pop_back();
    m.slots[slot] = std::move(active);
  } else {
    m.slots.push_back(std::move(active));
  }
  const ActiveOp& op_state = *m.slots[slot];
  m.schedule(slot, now + plan.start(choice.protocol, m.fabric.params()) + m.delay(op_state));
}

Time FlowNetwork::advance(Time limit, std::vector<std::uint32_t>& done) { return impl_->advance(limit, done); }

bool FlowNetwork::busy() const {
  return !impl_->timers.empty() || !impl_->in_flight.empty() || !impl_->ended_at_start.empty();
}

Time FlowNetwork::duration(const CommOp& op, Time /*now*/) {
  prepare({op});
  Time end = 0;
  run([&] {
    start(op, 0, 0);
    std::vector<std::uint32_t> done;
    while (busy()) {
      const Time t = advance(kNever, done);
      if (!done.empty()) end = t;
    }
  });
  return end;
}

models::CollectiveCost FlowNetwork::cost(const CommOp& op) {
  const Time t = duration(op, 0);
  return cost_of(impl_->planner.choose(op), op, t);
}

}  // namespace exasim::sim
