#include "sim/exec_graph.hpp"

#include "sim/huge_pages.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace exasim::sim {

std::string_view stream_kind_name(StreamKind k) {
  switch (k) {
    case StreamKind::kCompute: return "compute";
    case StreamKind::kComm: return "comm";
    case StreamKind::kCopy: return "copy";
  }
  return "unknown";
}

std::string_view task_kind_name(TaskKind k) {
  switch (k) {
    case TaskKind::kCompute: return "compute";
    case TaskKind::kMemcpy: return "memcpy";
    case TaskKind::kCollective: return "collective";
    case TaskKind::kSendRecv: return "sendrecv";
    case TaskKind::kHost: return "host";
    case TaskKind::kBarrier: return "barrier";
  }
  return "unknown";
}

DeviceId ExecGraph::add_device(std::string name) {
  if (devices_.size() >= kNone) throw std::invalid_argument("ExecGraph: too many devices");
  devices_.push_back(Device{std::move(name)});
  return static_cast<DeviceId>(devices_.size() - 1);
}

StreamId ExecGraph::add_stream(DeviceId device, StreamKind kind, std::string name) {
  if (device >= devices_.size()) {
    throw std::invalid_argument("ExecGraph::add_stream: unknown device " + std::to_string(device) +
                                " (graph has " + std::to_string(devices_.size()) + " devices)");
  }
  if (streams_.size() >= kNone) throw std::invalid_argument("ExecGraph: too many streams");
  streams_.push_back(Stream{device, kind, std::move(name)});
  stream_first_.push_back(kNone);
  stream_last_.push_back(kNone);
  return static_cast<StreamId>(streams_.size() - 1);
}

TaskId ExecGraph::add_task(const TaskSpec& spec) {
  if (spec.stream >= streams_.size()) {
    throw std::invalid_argument("ExecGraph::add_task: task '" + std::string(spec.label) +
                                "' names unknown stream " + std::to_string(spec.stream) + " (graph has " +
                                std::to_string(streams_.size()) + " streams)");
  }
  // !(d >= 0) also rejects NaN.
  if (!(spec.duration >= 0) || !std::isfinite(spec.duration)) {
    throw std::invalid_argument("ExecGraph::add_task: task '" + std::string(spec.label) +
                                "' has invalid duration " + std::to_string(spec.duration) +
                                " s (must be finite and >= 0)");
  }
  // kNone is reserved as "no task", so the last usable id is kNone - 1.
  if (tasks_.size() >= kNone) throw std::invalid_argument("ExecGraph::add_task: too many tasks");
  PackedTask t;
  t.label = intern(spec.label);
  t.kind = spec.kind;
  t.category = spec.category;
  t.stream = spec.stream;
  t.comm_op = spec.comm_op;
  t.cost = add_cost({spec.duration, spec.flops, spec.bytes});
  return push(t);
}

TaskId ExecGraph::add_task_like(const Task& task, StreamId stream, Time duration, std::uint32_t comm_op) {
  if (stream >= streams_.size() || task.label >= labels_.size() || !(duration >= 0) || !std::isfinite(duration) ||
      tasks_.size() >= kNone) {
    throw std::invalid_argument("ExecGraph::add_task_like: unknown stream or label, invalid duration, or too many tasks");
  }
  PackedTask t;
  t.label = task.label;
  t.kind = task.kind;
  t.category = task.category;
  t.stream = stream;
  t.comm_op = comm_op;
  t.cost = add_cost({duration, task.flops, task.bytes});
  return push(t);
}

TaskId ExecGraph::add_copy(const ExecGraph& source, TaskId id, StreamId stream, std::uint32_t comm_op) {
  if (&source != tables_from_ || id >= source.tasks_.size() || stream >= streams_.size() || tasks_.size() >= kNone) {
    throw std::invalid_argument(
        "ExecGraph::add_copy: not the graph whose tables this one shares, unknown task or stream, or too many tasks");
  }
  PackedTask t = source.tasks_[id];
  t.stream = stream;
  t.comm_op = comm_op;
  return push(t);
}

TaskId ExecGraph::add_barrier(std::string_view label) {
  if (tasks_.size() >= kNone) throw std::invalid_argument("ExecGraph::add_barrier: too many tasks");
  if (zero_cost_ == kNone) zero_cost_ = add_cost({});
  PackedTask t;
  t.label = intern(label);
  t.kind = TaskKind::kBarrier;
  t.stream = kNone;
  t.cost = zero_cost_;
  tasks_.push_back(t);
  next_in_stream_.push_back(kNone);
  return static_cast<TaskId>(tasks_.size() - 1);
}

void ExecGraph::share_tables(const ExecGraph& other) {
  if (!tasks_.empty()) throw std::logic_error("ExecGraph::share_tables: the graph already has tasks");
  labels_ = other.labels_;
  label_index_ = other.label_index_;
  costs_ = other.costs_;
  zero_cost_ = other.zero_cost_;
  tables_from_ = &other;
}

std::uint32_t ExecGraph::add_cost(const TaskCost& c) {
  if (costs_.size() >= kNone) throw std::invalid_argument("ExecGraph: too many task costs");
  costs_.push_back(c);
  return static_cast<std::uint32_t>(costs_.size() - 1);
}

TaskId ExecGraph::push(PackedTask t) {
  const auto id = static_cast<TaskId>(tasks_.size());
  tasks_.push_back(t);
  next_in_stream_.push_back(kNone);
  if (stream_last_[t.stream] == kNone) {
    stream_first_[t.stream] = id;
  } else {
    next_in_stream_[stream_last_[t.stream]] = id;
  }
  stream_last_[t.stream] = id;
  return id;
}

void ExecGraph::add_dependency(TaskId before, TaskId after) {
  if (before >= tasks_.size() || after >= tasks_.size()) {
    throw std::invalid_argument("ExecGraph::add_dependency: unknown task id (" + std::to_string(before) +
                                " -> " + std::to_string(after) + ", graph has " +
                                std::to_string(tasks_.size()) + " tasks)");
  }
  if (before == after) {
    throw std::invalid_argument("ExecGraph::add_dependency: task '" + std::string(label_of(before)) +
                                "' (id " + std::to_string(before) + ") cannot depend on itself");
  }
  edge_from_.push_back(before);
  edge_to_.push_back(after);
}

std::vector<TaskId> ExecGraph::stream_tasks(StreamId s) const {
  std::vector<TaskId> out;
  for (TaskId id = stream_first_.at(s); id != kNone; id = next_in_stream_[id]) out.push_back(id);
  return out;
}

void ExecGraph::reserve(std::size_t tasks, std::size_t edges) {
  reserve_huge(tasks_, tasks);
  reserve_huge(next_in_stream_, tasks);
  reserve_huge(edge_from_, edges);
  reserve_huge(edge_to_, edges);
}

std::uint32_t ExecGraph::intern(std::string_view label) {
  if (auto it = label_index_.find(label); it != label_index_.end()) return it->second;
  const auto index = static_cast<std::uint32_t>(labels_.size());
  labels_.emplace_back(label);
  label_index_.emplace(labels_.back(), index);
  return index;
}

}  // namespace exasim::sim
