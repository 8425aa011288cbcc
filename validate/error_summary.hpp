#pragma once
// The validation errors summed up the way the issues state their bounds: mean and worst absolute
// error per case file (one source or one table of it each), per kind of case (training, serving),
// and over all. The training issue's 10% bound is over its training runs alone.
#include <string>
#include <vector>

#include "validate/validation_case.hpp"

namespace exasim::validate {

struct ErrorSummary {
  std::string label;      // the case file's name, the kind, or "all"
  std::string source;     // the case file's citation (by file only)
  int cases = 0;
  double mean_abs = 0;    // mean of |error|
  double worst_abs = 0;   // max of |error|
};

struct ValidationSummary {
  std::vector<ErrorSummary> by_file;  // in the order of each file's first case
  std::vector<ErrorSummary> by_kind;  // training, then serving (those present)
  ErrorSummary all;
};

// results[i] belongs to cases[i].
ValidationSummary summarize(const std::vector<ValidationCase>& cases, const std::vector<CaseResult>& results);

}  // namespace exasim::validate
