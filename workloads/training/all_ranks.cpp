#include "workloads/training/all_ranks.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "hw/error.hpp"

namespace exasim::workloads {

namespace {

// How the replicas of a stage (0..Q-1) split into instances of one group shape: the group of
// replica 0 has local offsets O (0 among them); the instance of replica q is q's translate
// b + O, b its smallest member. Megatron's groups (TP, CP, DP x CP, EP, expert-DP, a pipeline
// peer) all tile the stage this way.
struct Partition {
  std::vector<std::uint32_t> base;      // per replica: its instance's smallest member
  std::vector<std::uint32_t> instance;  // per replica: its instance's index (instances ordered by base)
  std::uint32_t instances = 0;
};

Partition partition(const std::vector<std::uint32_t>& offsets, std::uint32_t replicas) {
  constexpr std::uint32_t kUnset = 0xffffffffu;
  Partition p;
  p.base.assign(replicas, kUnset);
  p.instance.assign(replicas, kUnset);
  for (std::uint32_t q = 0; q < replicas; ++q) {
    if (p.base[q] != kUnset) continue;
    for (std::uint32_t o : offsets) {
      const std::uint32_t r = q + o;
      if (r >= replicas || p.base[r] != kUnset) throw std::logic_error("all_ranks: a communication group does not tile its stage");
      p.base[r] = q;
      p.instance[r] = p.instances;
    }
    ++p.instances;
  }
  return p;
}

}  // namespace

TrainingGraph expand_to_all_ranks(const TrainingGraph& sym, const TrainingPlan& plan, const std::vector<Straggler>& stragglers) {
  const Parallelism& par = plan.par();
  const auto Q = static_cast<std::uint32_t>(par.tp * par.cp * par.dp);  // replicas per stage
  const auto pp = static_cast<std::uint32_t>(par.pp);
  const sim::ExecGraph& g = sym.graph;
  if (g.devices().size() != pp) throw std::logic_error("all_ranks: the symmetric graph needs one device per stage");
  const std::size_t T = g.task_count(), S = g.streams().size();
  // Every task is copied onto its stream's copy on each replica: a stream-less task (a barrier)
  // has no replica to go to.
  for (sim::TaskId x = 0; x < T; ++x)
    if (g.packed_tasks()[x].stream == sim::kNone)
      throw std::logic_error("all_ranks: task '" + std::string(g.label_of(x)) +
                             "' has no stream (a barrier); the expansion copies tasks stream by stream");

  std::vector<double> slowdown(std::size_t(Q) * pp, 1.0);
  for (const Straggler& s : stragglers) {
    if (s.rank >= slowdown.size()) {
      throw PlanError("straggler rank " + std::to_string(s.rank) + " is not in the job (" + std::to_string(slowdown.size()) +
                          " ranks)",
                      {"", 0, "simulation.stragglers"}, "give a rank below " + std::to_string(slowdown.size()));
    }
    slowdown[s.rank] *= s.slowdown;
  }

  TrainingGraph out;
  out.stages = sym.stages;
  sim::ExecGraph& eg = out.graph;
  eg.share_tables(g);
  for (std::uint32_t q = 0; q < Q; ++q) {
    for (std::uint32_t s = 0; s < pp; ++s) eg.add_device("rank" + std::to_string(q + Q * s));
    for (const sim::Stream& st : g.streams())
      eg.add_stream(q * pp + st.device, st.kind, "rank" + std::to_string(q + Q * st.device) + st.name.substr(st.name.find('/')));
  }

  // Per symmetric task with a comm op: the op's group shape, and which replicas of the task's own
  // stage take part (more than one: they meet at a barrier).
  std::map<std::vector<std::uint32_t>, Partition> partitions;
  struct CommShape {
    const Partition* part = nullptr;
    bool joined = false;
    std::uint32_t barrier_begin = 0;  // index of instance 0's barrier among the barriers
  };
  std::vector<CommShape> shape(T);
  std::uint32_t barriers = 0;
  for (sim::TaskId x = 0; x < T; ++x) {
    const sim::Task& t = g.task(x);
    if (t.comm_op == sim::kNone) continue;
    const std::uint32_t stage = g.streams()[t.stream].device;
    std::vector<std::uint32_t> offsets, here;
    for (std::uint32_t r : sym.comm_ops[t.comm_op].ranks) {
      offsets.push_back(r % Q);
      if (r / Q == stage) here.push_back(r % Q);
    }
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    auto it = partitions.find(offsets);
    if (it == partitions.end()) it = partitions.emplace(offsets, partition(offsets, Q)).first;
    shape[x].part = &it->second;
    shape[x].joined = here.size() > 1;
    if (shape[x].joined) {
      shape[x].barrier_begin = barriers;
      barriers += it->second.instances;
    }
  }

  // Comm ops per (symmetric op, instance): the members shifted by the instance's base.
  std::unordered_map<std::uint64_t, std::uint32_t> op_of;
  auto instance_op = [&](std::uint32_t op, std::uint32_t base) {
    const std::uint64_t key = (std::uint64_t(op) << 32) | base;
    auto [it, fresh] = op_of.try_emplace(key, static_cast<std::uint32_t>(out.comm_ops.size()));
    if (fresh) {
      sim::CommOp c = sym.comm_ops[op];
      for (std::uint32_t& r : c.ranks) r += base;  // base < Q - (r % Q): stays on r's stage
      out.comm_ops.push_back(std::move(c));
      out.comm_issuers.push_back(sym.comm_issuers[op]);
    }
    return it->second;
  };

  std::size_t joined = 0;
  for (const CommShape& c : shape) joined += c.joined;
  eg.reserve(std::size_t(Q) * T + barriers, std::size_t(Q) * (g.edge_count() + 2 * joined));
  // Task (q, x) is x Q + q: the copies of one task sit side by side, as the engine visits them
  // (every replica reaches a task at about the same time), so its per-task arrays are read a
  // cache line and a page at a time instead of one replica's stride apart.
  for (sim::TaskId x = 0; x < T; ++x) {
    const sim::Task& t = g.task(x);
    const std::uint32_t stage = g.streams()[t.stream].device;
    const bool slows = t.kind == sim::TaskKind::kCompute && t.category != kOffloadTask;
    for (std::uint32_t q = 0; q < Q; ++q) {
      const std::uint32_t op = t.comm_op == sim::kNone ? sim::kNone : instance_op(t.comm_op, shape[x].part->base[q]);
      const auto stream = static_cast<sim::StreamId>(q * S + t.stream);
      const double factor = slows ? slowdown[q + Q * stage] : 1.0;
      if (factor == 1.0) {
        eg.add_copy(g, x, stream, op);  // shares the symmetric task's cost entry
      } else {
        eg.add_task_like(t, stream, t.duration * factor, op);
      }
    }
  }
  const auto first_barrier = static_cast<sim::TaskId>(eg.task_count());
  for (sim::TaskId x = 0; x < T; ++x) {
    if (!shape[x].joined) continue;
    const std::string label = "join " + std::string(g.label_of(x));
    for (std::uint32_t i = 0; i < shape[x].part->instances; ++i) eg.add_barrier(label);
  }
  auto id = [&](std::uint32_t q, sim::TaskId x) { return static_cast<sim::TaskId>(std::size_t(x) * Q + q); };
  auto barrier = [&](std::uint32_t q, sim::TaskId x) { return first_barrier + shape[x].barrier_begin + shape[x].part->instance[q]; };

  // A joined collective's members wait for the barrier, which waits for what each member's copy
  // waited for: its dependencies and the task before it on its stream (the stream must be free).
  std::vector<sim::TaskId> stream_before(T, sim::kNone);
  for (sim::TaskId x = 0; x < T; ++x)
    if (const sim::TaskId next = g.next_in_stream()[x]; next != sim::kNone) stream_before[next] = x;
  const std::vector<sim::TaskId>& from = g.edge_from();
  const std::vector<sim::TaskId>& to = g.edge_to();
  // Each task's successors keep the symmetric order (its edges, then the barriers it feeds).
  for (std::size_t e = 0; e < from.size(); ++e) {
    const sim::TaskId v = to[e];
    for (std::uint32_t q = 0; q < Q; ++q) eg.add_dependency(id(q, from[e]), shape[v].joined ? barrier(q, v) : id(q, v));
  }
  for (sim::TaskId x = 0; x < T; ++x) {
    if (!shape[x].joined) continue;
    for (std::uint32_t q = 0; q < Q; ++q) {
      if (stream_before[x] != sim::kNone) eg.add_dependency(id(q, stream_before[x]), barrier(q, x));
      eg.add_dependency(barrier(q, x), id(q, x));
    }
  }
  return out;
}

}  // namespace exasim::workloads
