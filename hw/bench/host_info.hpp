#pragma once
// Identity of the machine the runner measures: host name, CPU model, cores, clocks, cache and
// memory sizes as the operating system reports them, and the SIMD width this build vectorizes for.
#include "hw/bench/suite.hpp"
#include "hw/profile/profile.hpp"

namespace exasim::bench {

// Fills profile.host / host_text and appends the CPU as device 0.
void describe_host(hw::Profile& profile, const Options& options);

// The 1-minute load average (/proc/loadavg), 0 when unknown: recorded so that a profile taken on
// a busy machine says so.
double load_average();

// The "all cores" thread count: options.threads, or every online CPU.
int all_threads(const Options& options);

}  // namespace exasim::bench
