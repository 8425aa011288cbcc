#pragma once
// Kendall's rank correlation tau-a between two scorings of the same items: (concordant -
// discordant pairs) / all pairs. 1: same order, -1: reversed. Used to check that the closed-form
// estimate orders plans as the engine does.
#include <vector>

namespace exasim::workloads::planner {

// a and b must have the same size (>= 2). Pairs tied in either scoring count as neither.
double kendall_tau(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace exasim::workloads::planner
