#include "workloads/planner/rank_correlation.hpp"

#include <stdexcept>

namespace exasim::workloads::planner {

double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) throw std::invalid_argument("kendall_tau: two scorings of at least two items");
  double concordant = 0, discordant = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      const double s = (a[i] - a[j]) * (b[i] - b[j]);
      if (s > 0) ++concordant;
      if (s < 0) ++discordant;
    }
  const double n = static_cast<double>(a.size());
  return (concordant - discordant) / (n * (n - 1) / 2);
}

}  // namespace exasim::workloads::planner
