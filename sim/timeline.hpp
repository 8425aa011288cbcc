#pragma once
// What ran where and when: the result of executing an ExecGraph.
#include <vector>

#include "sim/exec_graph.hpp"

namespace exasim::sim {

struct TaskRecord {
  Time start = 0;
  Time end = 0;
};

class Timeline {
 public:
  explicit Timeline(std::size_t tasks = 0);
  void record(TaskId id, Time start, Time end) { records_[id] = {start, end}; }
  const TaskRecord& operator[](TaskId id) const { return records_[id]; }
  const std::vector<TaskRecord>& records() const { return records_; }
  std::size_t size() const { return records_.size(); }

  Time makespan() const;  // latest end over all tasks (0 for an empty graph)
  // Sum of task durations on one stream / union of busy intervals on one device's streams of a kind.
  Time stream_busy(const ExecGraph& g, StreamId s) const;

 private:
  std::vector<TaskRecord> records_;
};

}  // namespace exasim::sim
