#include "sim/interval_set.hpp"

#include <algorithm>

namespace exasim::sim {

std::vector<Interval> merge_intervals(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& [s, e] : v) {
    if (e <= s) continue;
    if (!out.empty() && s <= out.back().second) out.back().second = std::max(out.back().second, e);
    else out.emplace_back(s, e);
  }
  return out;
}

Time total_length(const std::vector<Interval>& merged) {
  Time t = 0;
  for (const auto& [s, e] : merged) t += e - s;
  return t;
}

Time uncovered_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  Time covered = 0;
  std::size_t j = 0;
  for (const auto& [s, e] : a) {
    while (j < b.size() && b[j].second <= s) ++j;
    for (std::size_t k = j; k < b.size() && b[k].first < e; ++k)
      covered += std::min(e, b[k].second) - std::max(s, b[k].first);
  }
  return total_length(a) - covered;
}

}  // namespace exasim::sim
