#include "hw/bench/cpu_suites.hpp"

namespace exasim::bench {

std::vector<Suite> cpu_suites() { return {stream_suite(), gemm_suite(), latency_suite(), memcpy_suite()}; }

}  // namespace exasim::bench
