#pragma once
// The machine-readable result of a serving run: the `--json` keys of DESIGN.md (SI units), and
// the per-request CSV of `--requests`.
#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "workloads/scenario/scenario.hpp"
#include "workloads/serving/serving_simulation.hpp"

namespace exasim::workloads::serving {

nlohmann::json serving_result_json(const Scenario& scenario, const ServingResult& r, const std::string& workload);
nlohmann::json latency_json(const LatencySummary& s);  // {mean, p50, p90, p99}

// CSV: a header line, then one line per request as it finishes (full double precision).
void write_request_csv_header(std::ostream& out);
void write_request_csv_row(std::ostream& out, const RequestRecord& r);

}  // namespace exasim::workloads::serving
