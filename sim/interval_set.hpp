#pragma once
// Measures of unions of time intervals: how long a device computed, and how much of its
// communication no computation covered (the exposed part).
#include <utility>
#include <vector>

#include "sim/exec_graph.hpp"

namespace exasim::sim {

using Interval = std::pair<Time, Time>;

// Sorts and merges overlapping or touching intervals; drops empty ones.
std::vector<Interval> merge_intervals(std::vector<Interval> intervals);
Time total_length(const std::vector<Interval>& merged);
// Length of `a` not covered by `b` (both merged).
Time uncovered_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace exasim::sim
