#pragma once
// The summary table of a serving run (used by `exasim run` and `exasim plan`).
#include <ostream>
#include <string>

#include "workloads/scenario/scenario.hpp"
#include "workloads/serving/serving_simulation.hpp"

namespace exasim::cli {

void print_serving_summary(std::ostream& out, const workloads::Scenario& s, const workloads::serving::ServingConfig& c,
                           const workloads::serving::ServingResult& r, const std::string& workload);

// "mean / p50 / p90 / p99" in ms.
std::string latency_cell(const workloads::serving::LatencySummary& l);

}  // namespace exasim::cli
