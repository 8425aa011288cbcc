#pragma once
// Peak resident memory of this process so far (the benches print it beside their times).
#include <sys/resource.h>

namespace exasim::benchmarks {

inline double max_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace exasim::benchmarks
