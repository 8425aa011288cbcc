#pragma once
// Published measurements as validation cases (validate/cases/*.yaml). A case file has
//   source: <citation>
//   choices: [what every case of the file assumes where the source is silent]
//   defaults: <scenario mapping shared by its cases>
//   cases: [{id, scenario: <mapping merged over defaults>, measured: {...}, choices: [...]}]
// measured holds one of iteration_time_s, tokens_per_s, or tflops_per_gpu with flop_formula.
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "hw/config/node.hpp"

namespace exasim::validate {

struct ValidationCase {
  std::string id;
  std::string source;
  std::string file;                // the case file it came from
  config::Node scenario;           // defaults merged with the case's own keys
  config::Node measured;
  std::vector<std::string> choices;  // what the scenario chose where the source is silent: the
  std::size_t shared_choices = 0;    // file's (this many, first), then the case's own
};

struct CaseResult {
  std::string id;
  std::string kind;                // "training" or "serving"
  std::string metric;              // what the source measured
  double measured_value = 0;       // in the source's metric
  double predicted_value = 0;
  double measured_iteration_s = 0;
  double predicted_iteration_s = 0;
  double error = 0;                // predicted / measured iteration time - 1
};

std::vector<ValidationCase> load_cases(const std::string& path);
CaseResult run_case(const ValidationCase& c, const hw::Catalog& catalog);

// The case with `item` (measured, or a calibration file) applied first, under the case's own
// `calibration:` (a framework constant it states stays over it); what `exasim validate
// --calibration` runs.
ValidationCase with_calibration_first(const ValidationCase& c, const std::string& item);

// A deep copy of `base` with `over` merged in (maps merge key by key, anything else replaces).
config::Node merge_nodes(const config::Node& base, const config::Node& over);

}  // namespace exasim::validate
