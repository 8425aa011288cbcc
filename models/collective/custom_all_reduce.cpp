#include "models/collective/custom_all_reduce.hpp"

#include <limits>

namespace exasim::models {

double custom_all_reduce_time(double bytes, int ranks, double link_bandwidth, const CollectiveParams& p) {
  if (!(p.custom_all_reduce_efficiency > 0) || ranks < 2 || !(link_bandwidth > 0))
    return std::numeric_limits<double>::infinity();
  const double rate = link_bandwidth * p.custom_all_reduce_efficiency;  // what one GPU reads in
  return p.custom_all_reduce_overhead_s + (ranks - 1) * bytes / rate;
}

}  // namespace exasim::models
