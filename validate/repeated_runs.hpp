#pragma once
// Published runs measured more than once: cases whose scenarios are the same run (the same
// merged scenario, key order aside) but that carry different measurements, e.g. one recipe's
// entries in two releases of a vendor's performance page. No model fits both better than a
// floor set by the measurements alone, which `exasim validate` reports beside the errors.
#include <string>
#include <vector>

#include "validate/validation_case.hpp"

namespace exasim::validate {

// The scenario in a canonical text: mapping keys sorted, the top-level `name` left out.
std::string canonical_scenario(const ValidationCase& c);

struct RepeatedRun {
  std::vector<std::size_t> cases;  // indices into the cases given, two or more
  double shortest_s = 0, longest_s = 0;  // measured iteration times
  // The least worst error one prediction p can have over the group: |p / t - 1| is smallest at
  // its largest when p / shortest - 1 = 1 - p / longest, p = 2 ab / (a + b); the error is then
  // (longest - shortest) / (longest + shortest).
  double least_worst_error() const { return (longest_s - shortest_s) / (longest_s + shortest_s); }
};

// Groups of training cases (results[i] belongs to cases[i]) that are the same run measured apart
// by more than `tolerance` (relative), in the order of their first case.
std::vector<RepeatedRun> repeated_runs(const std::vector<ValidationCase>& cases, const std::vector<CaseResult>& results,
                                       double tolerance = 0.01);

}  // namespace exasim::validate
