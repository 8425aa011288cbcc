// `exasim sweep SWEEP.yaml`: runs the base scenario with every point's overrides (a grid or a
// list, workloads/planner/sweep_spec.hpp), prints a table, writes JSON and CSV. Under mpirun the
// points are split over the ranks and gathered (point_executor.hpp); the files rank 0 writes
// are byte-identical to a serial run's. A point that cannot run (bad key, does not fit) is a
// row with its error, not the end of the sweep.
#include <cstdio>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "apps/cli/commands.hpp"
#include "hw/config/json_text.hpp"
#include "apps/cli/point_executor.hpp"
#include "apps/cli/progress_bar.hpp"
#include "apps/cli/table.hpp"
#include "hw/error.hpp"
#include "traces/request_source_factory.hpp"
#include "workloads/planner/plan_evaluation.hpp"
#include "workloads/planner/sweep_spec.hpp"
#include "workloads/serving/serving_report.hpp"
#include "workloads/serving/serving_simulation.hpp"

namespace exasim::cli {

namespace {

namespace pl = workloads::planner;

struct SweepOptions {
  std::string sweep;
  std::string json_path, csv_path;
};

nlohmann::json run_training(const workloads::Scenario& s) {
  const pl::PlannerInputs in = pl::PlannerInputs::from(s);
  const workloads::TrainingPlan plan(s.model, *s.training, s.cluster.gpu_count(), s.cluster.gpus_per_node);
  return pl::evaluation_json(s, plan, pl::evaluate_plan(in, plan));
}

nlohmann::json run_serving(const workloads::Scenario& s) {
  namespace sv = workloads::serving;
  const sv::ServingConfig& cfg = *s.serving_config;
  auto source = traces::make_request_source(cfg.workload, s.simulation.seed, cfg.base_dir);
  const std::string workload = source->describe();
  const sv::ServingInputs in{s.model, s.cluster, cfg, s.calibration.collective, s.cost, s.simulation.seed, nullptr, {}};
  return sv::serving_result_json(s, sv::simulate_serving(in, *source), workload);
}

// One point: its result, or the one-line error that stopped it.
std::string run_point(const hw::Catalog& catalog, const pl::SweepSpec& spec, std::size_t i) {
  nlohmann::json point = {{"index", i}};
  nlohmann::json set = nlohmann::json::object();
  for (const auto& [k, v] : spec.points[i].set) set[k] = v;
  point["set"] = set;
  try {
    const workloads::Scenario s = workloads::load_scenario(spec.base, spec.points[i].overrides(), catalog);
    try {
      point["result"] = s.serving ? run_serving(s) : run_training(s);
    } catch (const PlanError& e) {
      if (!e.where().file.empty()) throw;
      workloads::rethrow_located(e, s);
    }
  } catch (const Error& e) {
    point["error"] = e.describe();
  }
  return config::to_json_text(point);
}

// A result value by dotted path ("memory.peak_per_gpu_bytes"), or null.
const nlohmann::json* lookup(const nlohmann::json& j, const std::string& path) {
  const nlohmann::json* at = &j;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!at->is_object() || !at->contains(part)) return nullptr;
    at = &(*at)[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return at;
}

// Full precision, so that CSV values read back to the same doubles.
std::string cell(const nlohmann::json* v) {
  if (!v || v->is_null()) return "";
  if (v->is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v->get<double>());
    return buf;
  }
  if (v->is_string()) return v->get<std::string>();
  return config::to_json_text(*v);
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5g", v);
  return buf;
}

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::vector<std::string> columns_of(const pl::SweepSpec& spec, const std::vector<nlohmann::json>& points) {
  if (!spec.columns.empty()) return spec.columns;
  for (const auto& p : points)
    if (p.contains("result")) return p["result"]["kind"] == "serving" ? pl::default_serving_columns() : pl::default_training_columns();
  return pl::default_training_columns();
}

void write_csv(std::ostream& out, const pl::SweepSpec& spec, const std::vector<nlohmann::json>& points,
               const std::vector<std::string>& columns) {
  out << "index";
  for (const auto& k : spec.keys) out << "," << csv_quote(k);
  for (const auto& c : columns) out << "," << csv_quote(c);
  out << ",error\n";
  for (const auto& p : points) {
    out << p["index"].get<std::size_t>();
    for (const auto& k : spec.keys) out << "," << csv_quote(p["set"].contains(k) ? p["set"][k].get<std::string>() : "");
    for (const auto& c : columns) out << "," << csv_quote(p.contains("result") ? cell(lookup(p["result"], c)) : "");
    out << "," << csv_quote(p.contains("error") ? p["error"].get<std::string>() : "") << "\n";
  }
}

void print_table(std::ostream& out, const pl::SweepSpec& spec, const std::vector<nlohmann::json>& points,
                 const std::vector<std::string>& columns) {
  std::vector<std::string> head = {"#"};
  for (const auto& k : spec.keys) head.push_back(k);
  for (const auto& c : columns) head.push_back(c);
  Table t(head);
  for (std::size_t c = 1 + spec.keys.size(); c < head.size(); ++c) t.set_align_right(c);
  for (const auto& p : points) {
    std::vector<std::string> row = {std::to_string(p["index"].get<std::size_t>())};
    for (const auto& k : spec.keys) row.push_back(p["set"].contains(k) ? p["set"][k].get<std::string>() : "");
    if (p.contains("error")) {
      row.push_back("error: " + p["error"].get<std::string>());
    } else {
      for (const auto& c : columns) {
        const nlohmann::json* v = lookup(p["result"], c);
        row.push_back(v && v->is_number() ? short_number(v->get<double>()) : cell(v));
      }
    }
    t.add_row(row);
  }
  t.print(out);
}

int sweep(const Context& ctx, const SweepOptions& o) {
  const std::unique_ptr<PointExecutor> exec = make_point_executor();
  const hw::Catalog catalog = hw::Catalog::load(ctx.configs_dir);
  const pl::SweepSpec spec = pl::load_sweep(o.sweep);
  ProgressBar bar;
  std::size_t done = 0;
  const std::vector<std::string> raw = exec->map(spec.points.size(), [&](std::size_t i) {
    std::string r = run_point(catalog, spec, i);
    if (exec->is_root()) bar.update("sweep", ++done, (spec.points.size() + static_cast<std::size_t>(exec->ranks()) - 1) / static_cast<std::size_t>(exec->ranks()));
    return r;
  });
  if (!exec->is_root()) return 0;
  if (exec->ranks() > 1) std::fprintf(stderr, "sweep: %zu points over %d MPI ranks\n", spec.points.size(), exec->ranks());
  std::vector<nlohmann::json> points;
  for (const std::string& r : raw) points.push_back(nlohmann::json::parse(r));
  const std::vector<std::string> columns = columns_of(spec, points);
  std::cout << "exasim sweep: " << spec.name << " — " << points.size() << " points over " << spec.base << "\n\n";
  print_table(std::cout, spec, points, columns);
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    if (!out) throw IoError("cannot write --json file", {o.json_path, 0, ""}, "check that the folder exists and is writable");
    out << config::to_json_text(nlohmann::json{{"sweep", spec.name}, {"base", spec.base}, {"keys", spec.keys}, {"points", points}}, 2)
        << "\n";
  }
  if (!o.csv_path.empty()) {
    std::ofstream out(o.csv_path);
    if (!out) throw IoError("cannot write --csv file", {o.csv_path, 0, ""}, "check that the folder exists and is writable");
    write_csv(out, spec, points, columns);
  }
  return 0;
}

}  // namespace

void add_sweep_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand("sweep", "run a grid or list of what-ifs over scenario keys (MPI-parallel under mpirun)");
  cmd->add_option("sweep", opts->sweep, "sweep YAML file (base scenario + grid: / points:; see configs/sweeps/)")->required();
  cmd->add_option("--json", opts->json_path, "write every point's overrides and full result as JSON to this file");
  cmd->add_option("--csv", opts->csv_path, "write one CSV row per point (its overrides and the metric columns) to this file");
  cmd->callback([&ctx, opts] { ctx.handler = [&ctx, opts] { return sweep(ctx, *opts); }; });
}

}  // namespace exasim::cli
