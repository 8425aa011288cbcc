#include "validate/error_summary.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

namespace exasim::validate {

namespace {

void add(ErrorSummary& s, double error) {
  s.mean_abs += std::fabs(error);  // a sum until finish()
  s.worst_abs = std::max(s.worst_abs, std::fabs(error));
  ++s.cases;
}

void finish(ErrorSummary& s) {
  if (s.cases > 0) s.mean_abs /= s.cases;
}

ErrorSummary& entry(std::vector<ErrorSummary>& list, const std::string& label) {
  for (ErrorSummary& s : list)
    if (s.label == label) return s;
  list.push_back({label, "", 0, 0, 0});
  return list.back();
}

}  // namespace

ValidationSummary summarize(const std::vector<ValidationCase>& cases, const std::vector<CaseResult>& results) {
  if (cases.size() != results.size()) throw std::invalid_argument("summarize: one result per case");
  ValidationSummary out;
  out.all.label = "all";
  for (const char* kind : {"training", "serving"})
    for (const CaseResult& r : results)
      if (r.kind == kind) {
        entry(out.by_kind, kind);
        break;
      }
  std::vector<std::string> paths;  // by_file[j] sums the cases of paths[j]
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto at = std::find(paths.begin(), paths.end(), cases[i].file);
    if (at == paths.end()) {
      at = paths.insert(paths.end(), cases[i].file);
      // Named by its file name; by its path when another case file has the same name.
      const std::string name = std::filesystem::path(cases[i].file).filename().string();
      const bool clash = std::any_of(cases.begin(), cases.end(), [&](const ValidationCase& o) {
        return o.file != cases[i].file && std::filesystem::path(o.file).filename().string() == name;
      });
      out.by_file.push_back({clash ? cases[i].file : name, cases[i].source, 0, 0, 0});
    }
    add(out.by_file[static_cast<std::size_t>(at - paths.begin())], results[i].error);
    if (!results[i].kind.empty()) add(entry(out.by_kind, results[i].kind), results[i].error);
    add(out.all, results[i].error);
  }
  for (ErrorSummary& s : out.by_file) finish(s);
  for (ErrorSummary& s : out.by_kind) finish(s);
  finish(out.all);
  return out;
}

}  // namespace exasim::validate
