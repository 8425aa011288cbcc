#include "sim/timeline.hpp"

#include "sim/huge_pages.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace exasim::sim {

Timeline::Timeline(std::size_t tasks) {
  reserve_huge(records_, tasks);
  records_.resize(tasks);
}

Time Timeline::makespan() const {
  Time latest = 0;
  for (const TaskRecord& r : records_) latest = std::max(latest, r.end);
  return latest;
}

// Tasks of one stream never overlap, so the sum of their durations is also the busy time.
Time Timeline::stream_busy(const ExecGraph& g, StreamId s) const {
  if (s >= g.streams().size()) {
    throw std::invalid_argument("Timeline::stream_busy: unknown stream " + std::to_string(s));
  }
  if (records_.size() != g.task_count()) {
    throw std::invalid_argument("Timeline::stream_busy: timeline has " + std::to_string(records_.size()) +
                                " tasks but the graph has " + std::to_string(g.task_count()));
  }
  Time busy = 0;
  for (TaskId id : g.stream_tasks(s)) busy += records_[id].end - records_[id].start;
  return busy;
}

}  // namespace exasim::sim
