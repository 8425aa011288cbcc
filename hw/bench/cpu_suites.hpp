#pragma once
// The CPU suites of exasim-bench, one per file.
#include "hw/bench/suite.hpp"

namespace exasim::bench {

Suite stream_suite();   // stream_suite.cpp
Suite gemm_suite();     // gemm_suite.cpp
Suite latency_suite();  // latency_suite.cpp
Suite memcpy_suite();   // memcpy_suite.cpp

}  // namespace exasim::bench
