// `exasim validate [CASES...]`: simulate published runs and print predicted vs measured.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "apps/cli/commands.hpp"
#include "hw/config/json_text.hpp"
#include "apps/cli/table.hpp"
#include "hw/error.hpp"
#include "validate/error_summary.hpp"
#include "validate/repeated_runs.hpp"
#include "validate/validation_case.hpp"

namespace exasim::cli {

namespace {

namespace fs = std::filesystem;

struct ValidateOptions {
  std::vector<std::string> selectors;  // files, folders, or case-id prefixes
  std::string json_path;
  double max_mape = 0;                 // > 0: fail when the mean absolute error exceeds it (percent)
  double max_error = 0;                // > 0: fail when any case exceeds it (percent)
  bool choices = false;                // list what each case assumes where its source is silent
  std::string calibration;             // measured or a file, applied under each case's own
};

std::vector<std::string> case_files(const std::string& dir) {
  std::vector<std::string> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<validate::ValidationCase> select_cases(const ValidateOptions& o, const std::string& default_dir) {
  std::vector<std::string> files, prefixes;
  for (const auto& s : o.selectors) {
    if (fs::is_directory(s)) for (auto& f : case_files(s)) files.push_back(f);
    else if (fs::exists(s)) files.push_back(s);
    else prefixes.push_back(s);
  }
  if (files.empty()) files = case_files(default_dir);
  std::vector<validate::ValidationCase> out;
  for (const auto& f : files)
    for (auto& c : validate::load_cases(f)) {
      bool keep = prefixes.empty();
      for (const auto& p : prefixes) keep = keep || c.id.starts_with(p);
      if (keep) out.push_back(std::move(c));
    }
  if (out.empty()) throw ConfigError("no validation case matches", {"<command line>", 0, "CASES"}, "give case files, folders or id prefixes");
  return out;
}

// What the cases assume where their sources are silent: each file's shared choices once, then
// the choices of its single cases.
void print_choices(const std::vector<validate::ValidationCase>& cases) {
  std::cout << "\nChoices where the sources are silent:\n";
  std::string file;
  for (const auto& c : cases) {
    if (c.file != file) {
      file = c.file;
      const auto n = std::count_if(cases.begin(), cases.end(), [&](const auto& o) { return o.file == file; });
      std::cout << "\n" << fs::path(file).filename().string() << " (" << n << (n == 1 ? " case" : " cases") << "): " << c.source << "\n";
      for (std::size_t i = 0; i < c.shared_choices; ++i) std::cout << "  - " << c.choices[i] << "\n";
      if (c.shared_choices == 0) std::cout << "  (none stated for the whole file)\n";
    }
    for (std::size_t i = c.shared_choices; i < c.choices.size(); ++i) std::cout << "  " << c.id << ": " << c.choices[i] << "\n";
  }
}

// Per case file (when there are several) and per kind of case (when both are present), the mean
// and worst absolute error: the bounds the issues state are over such groups.
void print_summary(const validate::ValidationSummary& s) {
  if (s.by_file.size() > 1) {
    Table t({"case file", "cases", "mean abs. error", "worst"});
    for (std::size_t c = 1; c < 4; ++c) t.set_align_right(c);
    for (const auto& f : s.by_file)
      t.add_row({f.label, std::to_string(f.cases), fmt_percent(f.mean_abs, 1), fmt_percent(f.worst_abs, 1)});
    std::cout << "\n";
    t.print(std::cout);
  }
  if (s.by_kind.size() > 1) {
    std::cout << "\n";
    for (const auto& k : s.by_kind)
      std::cout << k.label << ": " << k.cases << " cases, mean absolute error " << fmt_percent(k.mean_abs, 1)
                << ", worst " << fmt_percent(k.worst_abs, 1) << "\n";
  }
}

nlohmann::json summary_json(const std::vector<validate::ErrorSummary>& list) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : list) {
    nlohmann::json j = {{"label", s.label}, {"cases", s.cases}, {"mean_absolute_error", s.mean_abs},
                        {"max_absolute_error", s.worst_abs}};
    if (!s.source.empty()) j["source"] = s.source;
    out.push_back(j);
  }
  return out;
}

// Serving cases have no iteration time: their cells stay empty.
std::string iteration(double seconds) { return seconds > 0 ? fmt_fixed(seconds, 3) : "-"; }

int validate_cases(const Context& ctx, const ValidateOptions& o) {
  const hw::Catalog catalog = hw::Catalog::load(ctx.configs_dir);
  const std::string default_dir = (fs::path(ctx.configs_dir).parent_path() / "validate" / "cases").string();
  const auto cases = select_cases(o, default_dir);
  Table t({"case", "metric", "measured", "predicted", "iter measured s", "iter predicted s", "error"});
  for (std::size_t c = 2; c < 7; ++c) t.set_align_right(c);
  nlohmann::json rows = nlohmann::json::array();
  std::vector<validate::CaseResult> results;
  double sum = 0, worst = 0;
  for (const auto& c : cases) {
    const validate::CaseResult& r = results.emplace_back(
        validate::run_case(o.calibration.empty() ? c : validate::with_calibration_first(c, o.calibration), catalog));
    t.add_row({r.id, r.metric, fmt_fixed(r.measured_value, r.measured_value < 10 ? 3 : 2),
               fmt_fixed(r.predicted_value, r.measured_value < 10 ? 3 : 2),
               iteration(r.measured_iteration_s), iteration(r.predicted_iteration_s), fmt_percent(r.error, 1)});
    sum += std::fabs(r.error);
    worst = std::max(worst, std::fabs(r.error));
    rows.push_back({{"id", r.id}, {"metric", r.metric}, {"measured", r.measured_value}, {"predicted", r.predicted_value},
                    {"measured_iteration_s", r.measured_iteration_s}, {"predicted_iteration_s", r.predicted_iteration_s},
                    {"error", r.error}, {"source", c.source}, {"choices", c.choices}});
  }
  const double mape = sum / static_cast<double>(cases.size());
  t.print(std::cout);
  std::cout << "\n" << cases.size() << " cases: mean absolute error " << fmt_percent(mape, 1) << ", worst "
            << fmt_percent(worst, 1) << "\n";
  const validate::ValidationSummary summary = validate::summarize(cases, results);
  print_summary(summary);
  const auto repeated = validate::repeated_runs(cases, results);
  nlohmann::json repeated_json = nlohmann::json::array();
  if (!repeated.empty()) {
    double floor = 0;
    std::cout << "\nThe same run measured apart (one scenario, several measurements): no prediction fits every\n"
                 "measurement of a run better than its floor, (longest - shortest) / (longest + shortest)\n";
    for (const auto& g : repeated) {
      floor = std::max(floor, g.least_worst_error());
      nlohmann::json ids = nlohmann::json::array();
      std::cout << "  floor " << fmt_percent(g.least_worst_error(), 1) << ":";
      for (std::size_t i : g.cases) {
        std::cout << "  " << results[i].id << " (" << fmt_fixed(results[i].measured_iteration_s, 3) << " s)";
        ids.push_back(results[i].id);
      }
      std::cout << "\n";
      repeated_json.push_back({{"ids", ids}, {"shortest_measured_s", g.shortest_s}, {"longest_measured_s", g.longest_s},
                               {"least_worst_error", g.least_worst_error()}});
    }
    std::cout << "worst error no model can avoid: " << fmt_percent(floor, 1) << "\n";
  }
  if (o.choices) print_choices(cases);
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    if (!out) throw IoError("cannot write --json file", {o.json_path, 0, ""}, "check the folder");
    out << config::to_json_text(nlohmann::json{{"cases", rows}, {"mean_absolute_error", mape}, {"max_absolute_error", worst},
                                               {"repeated_runs", repeated_json}, {"by_file", summary_json(summary.by_file)},
                                               {"by_kind", summary_json(summary.by_kind)}},
                                2)
        << "\n";
  }
  const bool too_far = (o.max_mape > 0 && mape * 100 > o.max_mape) || (o.max_error > 0 && worst * 100 > o.max_error);
  return too_far ? 1 : 0;
}

}  // namespace

void add_validate_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand("validate", "simulate published runs; table of predicted vs measured and error");
  cmd->add_option("cases", opts->selectors, "case files, folders, or case-id prefixes (default: validate/cases/)");
  cmd->add_option("--json", opts->json_path, "write the results as JSON to this file");
  cmd->add_option("--max-mape", opts->max_mape, "exit 1 when the mean absolute error exceeds this many percent");
  cmd->add_option("--max-error", opts->max_error, "exit 1 when any case's error exceeds this many percent");
  cmd->add_option("--calibration", opts->calibration,
                  "run every case on this calibration first: measured (each GPU's and node's files in "
                  "configs/calibration/defaults.yaml) or a calibration YAML; a case's own calibration: applies over it");
  cmd->add_flag("--choices", opts->choices, "after the table, list what each case assumes where its source is silent");
  cmd->callback([&ctx, opts] { ctx.handler = [&ctx, opts] { return validate_cases(ctx, *opts); }; });
}

}  // namespace exasim::cli
