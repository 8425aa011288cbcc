#include "sim/engine.hpp"

#include "sim/event_queue.hpp"
#include "sim/huge_pages.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace exasim::sim {
namespace {

// Events (event_queue.hpp) are task completions. seq is the order in which completions were
// scheduled; it breaks ties between equal times so that runs are deterministic. A task is
// scheduled once, or again each time compute slowed by communication speeds up or turns out not
// done (schedule() checks the count).

// Where one stream is in its program: the next unstarted task (kNone at the end), and whether a
// task is running. The task after it is next_in_stream_[head]: reading that beside the task's
// other state is cheaper than a separate program array per stream (a completion checks a
// successor against its stream's head, which with every rank simulated was a cache miss each).
struct StreamCursor {
  TaskId head = kNone;
  bool busy = false;
};

// State of one run(). Everything the hot loop touches is a flat vector built once up front.
class Run {
 public:
  // shared: the loop runs inside a link-sharing backend (execute_shared), which moves the clock
  // between the engine's events; else execute(), where the engine alone keeps time.
  Run(const ExecGraph& g, const std::vector<CommOp>* ops, NetworkBackend* backend, EngineStats& stats, bool join,
      const std::vector<double>& comm_share, bool shared)
      : g_(g), tasks_(g.packed_tasks()), costs_(g.costs()), next_in_stream_(g.next_in_stream()), ops_(ops),
        backend_(backend), stats_(stats), timeline_(g.task_count()), queue_(!shared), join_(join),
        comm_share_(comm_share), slowing_(!comm_share.empty()) {}

  Timeline execute() {
    build_successors();
    build_streams();
    start_ready_barriers();
    for (StreamId s = 0; s < streams_.size(); ++s) try_start_head(s, 0);
    while (!queue_.empty()) complete(queue_.pop());
    if (finished_ != tasks_.size()) throw std::runtime_error(deadlock_message());
    return std::move(timeline_);
  }

  // With a link-sharing backend: the loop runs inside the backend, comm tasks are handed to it
  // when they start, and each step takes whichever comes first, the next local completion or
  // the next op the network finishes (the network wins ties, in the order it reports them).
  Timeline execute_shared() {
    build_successors();
    build_streams();
    shared_ = true;
    backend_->prepare(ops_ != nullptr ? *ops_ : std::vector<CommOp>{});
    backend_->run([this] {
      start_ready_barriers();
      for (StreamId s = 0; s < streams_.size(); ++s) try_start_head(s, 0);
      std::vector<std::uint32_t> done;
      while (!queue_.empty() || backend_->busy()) {
        done.clear();
        const Time t = backend_->advance(queue_.empty() ? kNever : queue_.top_time(), done);
        if (!done.empty()) {
          for (std::uint32_t id : done) finish_comm(id, t);
        } else if (!queue_.empty()) {
          complete(queue_.pop());
        } else {
          break;  // the network reports nothing left to finish
        }
      }
    });
    if (finished_ != tasks_.size()) throw std::runtime_error(deadlock_message());
    return std::move(timeline_);
  }

 private:
  // CSR successor lists in edge insertion order, and the number of unfinished dependencies per task.
  void build_successors() {
    const std::vector<TaskId>& from = g_.edge_from();
    const std::vector<TaskId>& to = g_.edge_to();
    const std::size_t n = tasks_.size();
    if (from.size() >= kNone) throw std::invalid_argument("Engine: more than 2^32 - 1 dependency edges");
    reserve_huge(succ_begin_, n + 1);
    reserve_huge(remaining_, n);
    reserve_huge(succ_, from.size());
    succ_begin_.assign(n + 1, 0);
    remaining_.assign(n, 0);
    for (std::size_t e = 0; e < from.size(); ++e) {
      ++succ_begin_[from[e]];
      ++remaining_[to[e]];
    }
    // Inclusive prefix sums give each list's end; filling backwards moves them to the list's start.
    for (std::size_t i = 1; i <= n; ++i) succ_begin_[i] += succ_begin_[i - 1];
    succ_.resize(from.size());
    for (std::size_t e = from.size(); e-- > 0;) succ_[--succ_begin_[from[e]]] = to[e];
  }

  void build_streams() {
    streams_.resize(g_.streams().size());
    for (StreamId s = 0; s < streams_.size(); ++s) streams_[s] = StreamCursor{g_.stream_first(s), false};
    if (!slowing_) return;
    device_share_.assign(g_.devices().size(), 0.0);
    device_comms_.assign(g_.devices().size(), 0);
    device_streams_.assign(g_.devices().size(), {});
    running_.assign(streams_.size(), Slowed{});
    reserve_huge(live_seq_, tasks_.size());
    live_seq_.assign(tasks_.size(), 0);
    for (StreamId s = 0; s < streams_.size(); ++s) device_streams_[g_.streams()[s].device].push_back(s);
  }

  // Barriers belong to no stream: they start once their dependencies are done.
  void start_ready_barriers() {
    for (TaskId id = 0; id < tasks_.size(); ++id)
      if (tasks_[id].stream == kNone && remaining_[id] == 0) start(id, kNone, 0);
  }

  void complete(const Event& ev) {
    const Time now = ev.time;
    const StreamId own = tasks_[ev.task].stream;
    if (slowing_ && own != kNone) {
      if (tasks_[ev.task].kind == TaskKind::kCompute) {
        if (live_seq_[ev.task] != ev.seq) return;  // sped up since: an earlier event stood for it
        Slowed& r = running_[own];
        const Time end = r.since + r.work / rate_of(g_.streams()[own].device);
        if (end > now) {  // slowed down since it was scheduled: not done yet
          schedule(ev.task, timeline_[ev.task].start, end);
          return;
        }
        r = Slowed{};
      } else if (const double share = share_of(ev.task); share > 0) {
        change_share(g_.streams()[own].device, -share, now);
      }
    }
    ++stats_.events;
    ++finished_;
    if (own != kNone) streams_[own].busy = false;
    const std::uint32_t end = succ_begin_[ev.task + 1];
    for (std::uint32_t i = succ_begin_[ev.task]; i < end; ++i) {
      const TaskId v = succ_[i];
      if (--remaining_[v] != 0) continue;
      const StreamId s = tasks_[v].stream;
      if (s == kNone) {
        start(v, s, now);
      } else if (!streams_[s].busy && streams_[s].head == v) {
        start(v, s, now);
      }
    }
    if (own != kNone) try_start_head(own, now);
  }

  void try_start_head(StreamId s, Time now) {
    StreamCursor& c = streams_[s];
    if (c.busy || c.head == kNone || remaining_[c.head] != 0) return;
    start(c.head, s, now);
  }

  void finish_comm(TaskId id, Time now) {
    std::vector<TaskId> members;
    if (join_) {
      if (auto l = leader_.find(tasks_[id].comm_op); l != leader_.end() && l->second.task == id) leader_.erase(l);
      if (auto it = joined_.find(id); it != joined_.end()) {
        members = std::move(it->second);
        joined_.erase(it);
      }
    }
    timeline_.record(id, timeline_[id].start, now);
    complete(Event{now, 0, id});
    for (TaskId m : members) {
      timeline_.record(m, timeline_[m].start, now);
      complete(Event{now, 0, m});
    }
  }

  void start(TaskId id, StreamId s, Time now) {
    const PackedTask& t = tasks_[id];
    if (shared_ && t.comm_op != kNone) {
      const std::uint32_t op = checked_op(id);
      timeline_.record(id, now, now);
      streams_[s].head = next_in_stream_[id];
      streams_[s].busy = true;
      ++stats_.events;
      if (slowing_) change_share(g_.streams()[s].device, share_of(id), now);
      if (join_) {  // a member of an op that another member started at this instant rides along
        auto [it, fresh] = leader_.try_emplace(op, Leader{now, id});
        if (!fresh && it->second.time == now) {
          joined_[it->second.task].push_back(id);
          return;
        }
        it->second = Leader{now, id};
      }
      backend_->start((*ops_)[op], id, now);
      return;
    }
    const Time d = t.comm_op == kNone ? costs_[t.cost].duration : comm_duration(id, now);
    if (s != kNone) {
      streams_[s].head = next_in_stream_[id];
      streams_[s].busy = true;
    }
    ++stats_.events;
    if (slowing_ && s != kNone) {
      const DeviceId dev = g_.streams()[s].device;
      if (t.kind == TaskKind::kCompute) {
        running_[s] = Slowed{id, now, d};
        schedule(id, now, now + d / rate_of(dev));
        return;
      }
      change_share(dev, share_of(id), now);
    }
    schedule(id, now, now + d);
  }

  void schedule(TaskId id, Time start, Time end) {
    timeline_.record(id, start, end);
    if (seq_ == kNone) throw std::runtime_error("Engine: more than 2^32 - 1 scheduled completions");
    if (slowing_) live_seq_[id] = seq_;
    queue_.push(Event{end, seq_++, id});
  }

  // The share of its device's compute that comm task `id` takes while it runs (0 for others).
  double share_of(TaskId id) const {
    const PackedTask& t = tasks_[id];
    if (t.comm_op == kNone || t.comm_op >= comm_share_.size()) return 0;
    if (t.kind != TaskKind::kCollective && t.kind != TaskKind::kSendRecv) return 0;
    return comm_share_[t.comm_op];
  }

  double rate_of(DeviceId dev) const { return 1 - std::min(device_share_[dev], Engine::kMaxCommComputeShare); }

  // A comm op starts (delta > 0) or ends (delta < 0) on `dev`: the compute tasks running there
  // keep the work they have done at the old rate and finish the rest at the new one. Only a
  // speed-up schedules a new completion; after a slow-down the standing one comes too early,
  // and complete() puts it off then (most comm ops end before the kernel beside them does).
  void change_share(DeviceId dev, double delta, Time now) {
    if (delta == 0) return;
    const double before = rate_of(dev);
    device_comms_[dev] += delta > 0 ? 1 : -1;
    // Back to exactly zero when none runs, so rounding in the sums never leaves a residue.
    device_share_[dev] = device_comms_[dev] == 0 ? 0.0 : device_share_[dev] + delta;
    const double after = rate_of(dev);
    if (after == before) return;
    for (StreamId s : device_streams_[dev]) {
      Slowed& r = running_[s];
      if (r.task == kNone) continue;
      r.work = std::max(0.0, r.work - (now - r.since) * before);
      r.since = now;
      if (after > before) schedule(r.task, timeline_[r.task].start, now + r.work / after);
    }
  }

  std::uint32_t checked_op(TaskId id) const {
    const std::uint32_t op = tasks_[id].comm_op;
    if (ops_ == nullptr || backend_ == nullptr) {
      throw std::invalid_argument(who(id) + " has a comm op but the engine has no comm ops or no network backend");
    }
    if (op >= ops_->size()) {
      throw std::invalid_argument(who(id) + " refers to comm op " + std::to_string(op) + " but only " +
                                  std::to_string(ops_->size()) + " exist");
    }
    return op;
  }

  Time comm_duration(TaskId id, Time now) const {
    const std::uint32_t op = checked_op(id);  // before touching backend_, which may be null
    const Time d = backend_->duration((*ops_)[op], now);
    if (!(d >= 0) || !std::isfinite(d)) {
      throw std::runtime_error(who(id) + ": network backend returned invalid duration " + std::to_string(d));
    }
    return d;
  }

  std::string who(TaskId id) const { return "Engine: task '" + std::string(g_.label_of(id)) + "'"; }
  std::string deadlock_message() const;

  const ExecGraph& g_;
  const std::vector<PackedTask>& tasks_;
  const std::vector<TaskCost>& costs_;
  const std::vector<TaskId>& next_in_stream_;  // the graph's: per task, the task after it on its stream
  const std::vector<CommOp>* ops_;
  NetworkBackend* backend_;
  EngineStats& stats_;
  Timeline timeline_;
  std::vector<std::uint32_t> succ_begin_;  // size tasks + 1
  std::vector<TaskId> succ_;
  std::vector<std::uint32_t> remaining_;  // unfinished dependencies per task
  std::vector<StreamCursor> streams_;
  EventQueue queue_;
  std::uint32_t seq_ = 0;
  std::size_t finished_ = 0;
  bool shared_ = false;  // comm tasks go to a link-sharing backend
  bool join_ = false;    // Engine::join_identical_collectives
  // Engine::slow_compute_during_comm: per device, the summed share of the comm tasks running
  // there and their count; per stream, the compute task running on it, the time its remaining
  // work (seconds at the full rate) was last brought up to date, and that work; per task, the
  // sequence number of its latest scheduled completion (earlier ones are stale).
  struct Slowed {
    TaskId task = kNone;
    Time since = 0;
    Time work = 0;
  };
  const std::vector<double>& comm_share_;
  bool slowing_ = false;
  std::vector<double> device_share_;
  std::vector<std::int32_t> device_comms_;
  std::vector<std::vector<StreamId>> device_streams_;
  std::vector<Slowed> running_;
  std::vector<std::uint32_t> live_seq_;
  struct Leader {
    Time time;
    TaskId task;
  };
  std::unordered_map<std::uint32_t, Leader> leader_;              // comm op -> its member in flight that started it
  std::unordered_map<TaskId, std::vector<TaskId>> joined_;        // that member -> the others riding along
};

// Cold path: explain why the blocked stream heads cannot start. With no task running, every
// unfinished task is unstarted, so following "waits on" from any head must close a loop through
// dependencies and stream order; the direct case is a dependency on a later task of the same stream.
std::string Run::deadlock_message() const {
  std::vector<char> unfinished(tasks_.size(), 0);
  for (const StreamCursor& c : streams_) {
    for (TaskId p = c.head; p != kNone; p = next_in_stream_[p]) unfinished[p] = 1;
  }
  // A barrier that started has finished (it takes no time); one still waiting never started.
  for (TaskId id = 0; id < tasks_.size(); ++id)
    if (tasks_[id].stream == kNone && remaining_[id] != 0) unfinished[id] = 1;
  const std::size_t stuck = tasks_.size() - finished_;
  std::string msg = "Engine: deadlock: " + std::to_string(stuck) + " of " + std::to_string(tasks_.size()) +
                    " tasks can never start;";
  const std::vector<TaskId>& from = g_.edge_from();
  const std::vector<TaskId>& to = g_.edge_to();
  int named = 0;
  for (StreamId s = 0; s < streams_.size() && named < 5; ++s) {
    const TaskId h = streams_[s].head;
    if (h == kNone) continue;
    TaskId blocker = kNone;
    for (std::size_t e = 0; e < to.size() && blocker == kNone; ++e) {
      if (to[e] == h && unfinished[from[e]]) blocker = from[e];
    }
    if (blocker == kNone) continue;  // not possible when the heap ran dry, but never name a bogus reason
    msg += (named ? "; '" : " '") + std::string(g_.label_of(h)) + "' (task " + std::to_string(h) + ", stream '" +
           g_.streams()[s].name + "') waits on '" + std::string(g_.label_of(blocker)) + "' (task " +
           std::to_string(blocker) + ")";
    msg += tasks_[blocker].stream == kNone ? " (a barrier)"
           : tasks_[blocker].stream == s ? ", a later task of its own stream"
                                       : " on stream '" + g_.streams()[tasks_[blocker].stream].name +
                                             "' (dependency cycle through dependencies and stream order)";
    ++named;
  }
  return msg;
}

}  // namespace

Engine::Engine(const ExecGraph& graph, const std::vector<CommOp>* comm_ops, NetworkBackend* backend)
    : graph_(graph), comm_ops_(comm_ops), backend_(backend) {}

void Engine::slow_compute_during_comm(std::vector<double> share_by_comm_op) {
  for (double s : share_by_comm_op) {
    if (!(s >= 0 && s < 1)) throw std::invalid_argument("Engine: a comm op's compute share must be in [0, 1), got " + std::to_string(s));
  }
  comm_share_ = std::move(share_by_comm_op);
  // All zero: nothing slows, so keep the plain loop (and its speed).
  if (std::all_of(comm_share_.begin(), comm_share_.end(), [](double x) { return x == 0; })) comm_share_.clear();
}

Timeline Engine::run() {
  stats_ = EngineStats{};
  const bool shared = backend_ != nullptr && backend_->shares_links();
  Run run(graph_, comm_ops_, backend_, stats_, join_, comm_share_, shared);
  return shared ? run.execute_shared() : run.execute();
}

}  // namespace exasim::sim
