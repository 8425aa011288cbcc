#include "models/collective/custom_all_reduce.hpp"

#include <algorithm>
#include <limits>

namespace exasim::models {

double custom_all_reduce_time(double bytes, int ranks, double link_bandwidth, const CollectiveParams& p) {
  if (!(p.custom_all_reduce_efficiency > 0) || ranks < 2 || !(link_bandwidth > 0))
    return std::numeric_limits<double>::infinity();
  const double n = ranks;
  const double rate = link_bandwidth * p.custom_all_reduce_efficiency;  // what one GPU takes in
  const double one_shot = p.custom_all_reduce_overhead_s + (n - 1) * bytes / rate;
  const double two_shot = 2 * p.custom_all_reduce_overhead_s + 2 * (n - 1) / n * bytes / rate;
  return std::min(one_shot, two_shot);
}

}  // namespace exasim::models
