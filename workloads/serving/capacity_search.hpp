#pragma once
// Capacity search: the highest request rate a deployment serves within its SLO. The workload's
// arrivals are replayed faster or slower (times divided by a factor, so a Poisson source stays
// Poisson at the new rate and a trace keeps its burst shape); a rate "meets the SLO" when at
// least slo.attainment of the requests meet both TTFT and TPOT limits. The factor is bracketed by
// doubling/halving, then bisected until the bracket is within `tolerance` (relative) of the
// answer: the result is the highest probed rate that met the SLO.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "workloads/serving/serving_simulation.hpp"

namespace exasim::workloads::serving {

using SourceFactory = std::function<std::unique_ptr<RequestSource>()>;

// A source whose arrival times are divided by `factor` (> 1 = faster).
std::unique_ptr<RequestSource> scale_arrivals(std::unique_ptr<RequestSource> source, double factor);

struct RateProbe {
  double rate_per_s = 0;
  double slo_attainment = 0;
  bool meets = false;
};

struct CapacityResult {
  double base_rate_per_s = 0;  // the workload's own mean rate: requests / arrival span
  double max_rate_per_s = 0;   // 0: not even the slowest probe met the SLO
  ServingResult at_max;        // the run at max_rate_per_s
  std::vector<RateProbe> probes;
};

struct CapacityOptions {
  double tolerance = 0.02;   // stop when (hi - lo) / lo <= 2%
  double min_factor = 1.0 / 1024;
  double max_factor = 1024;
};

// Throws ConfigError (key serving.slo / serving.workload) when the scenario has no SLO or its
// arrivals all come at once.
CapacityResult max_rate_meeting_slo(const ServingInputs& in, const SourceFactory& make_source,
                                    const CapacityOptions& options = {});

// One run of the workload at `rate_per_s` (arrivals scaled from the base rate).
ServingResult run_at_rate(const ServingInputs& in, const SourceFactory& make_source, double base_rate_per_s,
                          double rate_per_s);
// The workload's mean arrival rate (requests / time from first to last arrival); 0 for offline.
double base_arrival_rate(const SourceFactory& make_source);

}  // namespace exasim::workloads::serving
