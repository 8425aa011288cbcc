#pragma once
// The execution graph: tasks bound to device streams, with dependency edges.
// Streams behave like CUDA streams: tasks on one stream run one at a time in the order they
// were added; streams of one device run concurrently; a task also waits for all its dependencies.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace exasim::sim {

using Time = double;  // seconds
using TaskId = std::uint32_t;
using DeviceId = std::uint32_t;
using StreamId = std::uint32_t;
inline constexpr std::uint32_t kNone = 0xffffffffu;

enum class StreamKind : std::uint8_t { kCompute, kComm, kCopy };
// kBarrier: a zero-time join of several streams' tasks that belongs to no stream (a collective's
// members meet there when every rank is simulated); it runs as soon as its dependencies are done.
enum class TaskKind : std::uint8_t { kCompute, kMemcpy, kCollective, kSendRecv, kHost, kBarrier };

std::string_view stream_kind_name(StreamKind k);
std::string_view task_kind_name(TaskKind k);

struct Device {
  std::string name;
};

struct Stream {
  DeviceId device = 0;
  StreamKind kind = StreamKind::kCompute;
  std::string name;  // e.g. "stage3/compute"
};

// What a task does. duration is the time it occupies its stream when the engine does not ask a
// network backend (comm_op == kNone); flops and bytes are for metrics (achieved rates, MFU/HFU).
struct TaskSpec {
  std::string_view label;       // interned by the graph; tasks with equal labels share storage
  TaskKind kind = TaskKind::kCompute;
  StreamId stream = 0;
  Time duration = 0;            // seconds, >= 0
  double flops = 0;             // floating-point operations executed
  double bytes = 0;             // bytes moved (memory traffic, or payload for communication)
  std::uint32_t comm_op = kNone;  // index of a communication op resolved by a NetworkBackend
  std::uint16_t category = 0;   // caller-defined tag for breakdowns (e.g. forward/backward/optimizer)
};

// A task as callers see it (a value built from the graph's packed storage, see ExecGraph::task).
struct Task {
  std::uint32_t label = 0;  // index into labels()
  TaskKind kind = TaskKind::kCompute;
  std::uint16_t category = 0;
  StreamId stream = 0;
  std::uint32_t comm_op = kNone;
  Time duration = 0;
  double flops = 0;
  double bytes = 0;
};

// What a task costs: the time it holds its stream and, for metrics, its work. Kept apart from
// the task so that copies of one task (every rank's copy of a kernel) share one entry.
struct TaskCost {
  Time duration = 0;
  double flops = 0;
  double bytes = 0;
};

// A task as the graph stores it: 20 bytes (a graph of every rank holds tens of millions of them,
// and the engine reads one per event).
struct PackedTask {
  std::uint32_t label = 0;
  TaskKind kind = TaskKind::kCompute;
  std::uint16_t category = 0;
  StreamId stream = 0;
  std::uint32_t comm_op = kNone;
  std::uint32_t cost = 0;  // index into costs()
};
static_assert(sizeof(PackedTask) == 20);

class ExecGraph;

// The tasks of a graph in id order, as Task values (for range-for).
class TaskRange {
 public:
  class Iterator {
   public:
    Iterator(const ExecGraph* g, TaskId id) : g_(g), id_(id) {}
    Task operator*() const;
    Iterator& operator++() {
      ++id_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return id_ != o.id_; }

   private:
    const ExecGraph* g_;
    TaskId id_;
  };
  TaskRange(const ExecGraph* g, TaskId size) : g_(g), size_(size) {}
  Iterator begin() const { return {g_, 0}; }
  Iterator end() const { return {g_, size_}; }

 private:
  const ExecGraph* g_;
  TaskId size_;
};

class ExecGraph {
 public:
  DeviceId add_device(std::string name);
  StreamId add_stream(DeviceId device, StreamKind kind, std::string name);
  // Appends a task to its stream (program order = call order). Throws std::invalid_argument on a
  // bad stream or a negative/NaN duration.
  TaskId add_task(const TaskSpec& spec);
  // A copy of `task` (label, kind, rates) on `stream` with its own duration and comm op; `task`
  // may come from another graph whose tables this one shares (see share_tables).
  TaskId add_task_like(const Task& task, StreamId stream, Time duration, std::uint32_t comm_op);
  // A copy of `source`'s task `id` on `stream` with its own comm op and the same cost entry:
  // `source` must be the graph whose tables this one took (share_tables), with no task added
  // before. Cheaper than add_task_like: nothing is copied but the 20-byte task.
  TaskId add_copy(const ExecGraph& source, TaskId id, StreamId stream, std::uint32_t comm_op);
  // A stream-less join (TaskKind::kBarrier, stream kNone, zero time).
  TaskId add_barrier(std::string_view label);
  // Takes `other`'s label and cost tables, so tasks copied from it keep their indices.
  void share_tables(const ExecGraph& other);
  // `after` may not start before `before` has finished. Throws on unknown ids or a self-edge.
  void add_dependency(TaskId before, TaskId after);

  std::size_t task_count() const { return tasks_.size(); }
  std::size_t edge_count() const { return edge_to_.size(); }
  Task task(TaskId id) const {
    const PackedTask& p = tasks_[id];
    const TaskCost& c = costs_[p.cost];
    return Task{p.label, p.kind, p.category, p.stream, p.comm_op, c.duration, c.flops, c.bytes};
  }
  TaskRange tasks() const { return {this, static_cast<TaskId>(tasks_.size())}; }
  // The packed storage, for the engine's loop: a task's cost is costs()[packed_tasks()[id].cost].
  const std::vector<PackedTask>& packed_tasks() const { return tasks_; }
  const std::vector<TaskCost>& costs() const { return costs_; }
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<Stream>& streams() const { return streams_; }
  const std::string& label(std::uint32_t index) const { return labels_[index]; }
  std::string_view label_of(TaskId id) const { return labels_[tasks_[id].label]; }

  // Dependency edges as (before, after) pairs in insertion order.
  const std::vector<TaskId>& edge_from() const { return edge_from_; }
  const std::vector<TaskId>& edge_to() const { return edge_to_; }
  // Tasks of one stream in program order (a copy: the graph keeps them as links).
  std::vector<TaskId> stream_tasks(StreamId s) const;
  // A stream's first and last task (kNone when it has none), and per task the task after it on
  // its stream (kNone: the last, or a barrier). 4 bytes a task, read by the engine as they are.
  TaskId stream_first(StreamId s) const { return stream_first_[s]; }
  TaskId stream_last(StreamId s) const { return stream_last_[s]; }
  const std::vector<TaskId>& next_in_stream() const { return next_in_stream_; }

  void reserve(std::size_t tasks, std::size_t edges);

 private:
  std::uint32_t intern(std::string_view label);
  std::uint32_t add_cost(const TaskCost& c);
  TaskId push(PackedTask t);  // a task on a stream: appended to the stream's links

  std::vector<Device> devices_;
  std::vector<Stream> streams_;
  std::vector<TaskId> stream_first_, stream_last_;  // per stream
  std::vector<TaskId> next_in_stream_;              // per task

  std::vector<PackedTask> tasks_;
  std::vector<TaskCost> costs_;
  std::uint32_t zero_cost_ = kNone;  // the cost entry of barriers, once one exists
  // The graph share_tables copied from, compared (never dereferenced) by add_copy: a copied task's
  // cost index is only valid in the table it came from.
  const ExecGraph* tables_from_ = nullptr;
  std::vector<TaskId> edge_from_, edge_to_;
  std::vector<std::string> labels_;
  // Transparent hash so intern() looks up a string_view without building a std::string.
  struct LabelHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint32_t, LabelHash, std::equal_to<>> label_index_;
};

inline Task TaskRange::Iterator::operator*() const { return g_->task(id_); }

}  // namespace exasim::sim
