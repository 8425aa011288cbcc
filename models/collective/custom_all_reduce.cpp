#include "models/collective/custom_all_reduce.hpp"

#include <algorithm>
#include <limits>

namespace exasim::models {

double custom_all_reduce_time(double bytes, int ranks, double link_bandwidth, const CollectiveParams& p) {
  if (!(p.custom_all_reduce_efficiency > 0) || ranks < 2 || !(link_bandwidth > 0))
    return std::numeric_limits<double>::infinity();
  const double rate = link_bandwidth * p.custom_all_reduce_efficiency;  // what one GPU reads in
  return p.custom_all_reduce_overhead_s + (ranks - 1) * bytes / rate;
}

double engine_all_reduce_time(double nccl_s, double bytes, int ranks, double link_bandwidth, const CollectiveParams& p) {
  return std::min(nccl_s, custom_all_reduce_time(bytes, ranks, link_bandwidth, p));
}

}  // namespace exasim::models
