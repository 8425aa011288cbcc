// `exasim plan SCENARIO.yaml`: for a serving scenario, the highest request rate that meets the
// SLO (binary search over the arrival rate, stated tolerance) for the scenario's deployment and
// for every deployment shape of the same GPU budget (TP degree, replicas, prefill/decode split).
// Training scenarios go to the training plan search (plan_training.cpp).
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/cli/commands.hpp"
#include "hw/config/json_text.hpp"
#include "apps/cli/plan_training.hpp"
#include "apps/cli/serving_summary.hpp"
#include "apps/cli/table.hpp"
#include "hw/error.hpp"
#include "traces/request_source_factory.hpp"
#include "workloads/serving/capacity_search.hpp"
#include "workloads/serving/deployment_shapes.hpp"
#include "workloads/serving/serving_report.hpp"

namespace exasim::cli {

namespace {

namespace sv = workloads::serving;

struct PlanOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string json_path;
  std::string objective;
  int top = 0;
  int gpus = 0;                 // GPU budget of the shape comparison; 0 = the scenario's deployment
  double tolerance = 0.02;
  bool shapes = true;
  std::vector<double> rates;    // also evaluate every shape at these rates
};

struct ShapeRow {
  std::string label;
  int gpus = 0;
  sv::CapacityResult capacity;
  std::vector<double> attainment;  // at PlanOptions::rates
};

ShapeRow evaluate(const workloads::Scenario& s, const sv::ServingConfig& cfg, const std::string& label,
                  const sv::SourceFactory& make, const PlanOptions& o) {
  sv::ServingInputs in{s.model, s.cluster, cfg, s.calibration.collective, s.cost, s.simulation.seed, nullptr, {}};
  ShapeRow row{label, cfg.gpus(), sv::max_rate_meeting_slo(in, make, {o.tolerance}), {}};
  for (const double rate : o.rates)
    row.attainment.push_back(sv::run_at_rate(in, make, row.capacity.base_rate_per_s, rate).slo_attainment);
  return row;
}

nlohmann::json row_json(const ShapeRow& r) {
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : r.capacity.probes) probes.push_back({{"rate_per_s", p.rate_per_s}, {"slo_attainment", p.slo_attainment}, {"meets", p.meets}});
  return {{"shape", r.label},
          {"gpus", r.gpus},
          {"max_rate_per_s", r.capacity.max_rate_per_s},
          {"max_rate_per_gpu", r.capacity.max_rate_per_s / r.gpus},
          {"ttft_s", sv::latency_json(r.capacity.at_max.ttft)},
          {"tpot_s", sv::latency_json(r.capacity.at_max.tpot)},
          {"slo_attainment", r.capacity.at_max.slo_attainment},
          {"attainment_at_rates", r.attainment},
          {"probes", probes}};
}

void print_rows(std::ostream& out, const std::vector<ShapeRow>& rows, const PlanOptions& o) {
  std::vector<std::string> head = {"#", "shape", "GPUs", "max rate req/s", "req/s per GPU", "TTFT p90 ms", "TPOT p90 ms", "attained"};
  for (const double r : o.rates) head.push_back("@" + fmt_fixed(r, 2) + "/s");
  Table t(head);
  for (std::size_t c = 2; c < head.size(); ++c) t.set_align_right(c);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ShapeRow& r = rows[i];
    const auto& at = r.capacity.at_max;
    const bool ok = r.capacity.max_rate_per_s > 0;
    std::vector<std::string> cells = {std::to_string(i + 1), r.label, std::to_string(r.gpus), fmt_fixed(r.capacity.max_rate_per_s, 3),
                                      fmt_fixed(r.capacity.max_rate_per_s / r.gpus, 3), ok ? fmt_fixed(at.ttft.p90 * 1e3, 1) : "-",
                                      ok ? fmt_fixed(at.tpot.p90 * 1e3, 1) : "-", ok ? fmt_percent(at.slo_attainment, 1) : "-"};
    for (const double a : r.attainment) cells.push_back(fmt_percent(a, 1));
    t.add_row(cells);
  }
  t.print(out);
}

int plan_serving(const workloads::Scenario& s, const PlanOptions& o) {
  const sv::ServingConfig& cfg = *s.serving_config;
  const sv::SourceFactory make = [&] { return traces::make_request_source(cfg.workload, s.simulation.seed, cfg.base_dir); };
  const std::string workload = make()->describe();
  std::cout << "exasim plan: " << s.name << " — " << s.model.name << " on " << s.cluster.gpu.name << "; workload: " << workload
            << "\nSLO: TTFT <= " << fmt_fixed(cfg.slo.ttft_s * 1e3, 1) << " ms, TPOT <= " << fmt_fixed(cfg.slo.tpot_s * 1e3, 1)
            << " ms for at least " << fmt_percent(cfg.slo.attainment, 0) << " of requests; rate found by bisection to "
            << fmt_percent(o.tolerance, 1) << " (arrivals replayed faster or slower)\n\n";
  std::vector<ShapeRow> rows;
  rows.push_back(evaluate(s, cfg, sv::shape_label(cfg) + " (scenario)", make, o));
  if (o.shapes) {
    const int budget = o.gpus > 0 ? o.gpus : cfg.gpus();
    for (const auto& shape : sv::deployment_shapes(cfg, s.model, s.cluster, budget)) {
      if (shape.label + " (scenario)" == rows.front().label) continue;
      rows.push_back(evaluate(s, shape.config, shape.label, make, o));
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ShapeRow& a, const ShapeRow& b) {
    return a.capacity.max_rate_per_s / a.gpus > b.capacity.max_rate_per_s / b.gpus;
  });
  if (o.top > 0 && rows.size() > static_cast<std::size_t>(o.top)) rows.resize(static_cast<std::size_t>(o.top));
  print_rows(std::cout, rows, o);
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    if (!out) throw IoError("cannot write --json file", {o.json_path, 0, ""}, "check that the folder exists and is writable");
    nlohmann::json shapes = nlohmann::json::array();
    for (const auto& r : rows) shapes.push_back(row_json(r));
    out << config::to_json_text(
               nlohmann::json{{"scenario", s.name}, {"kind", "serving-capacity"}, {"workload", workload},
                              {"slo", {{"ttft_s", cfg.slo.ttft_s}, {"tpot_s", cfg.slo.tpot_s}, {"attainment", cfg.slo.attainment}}},
                              {"tolerance", o.tolerance}, {"rates", o.rates}, {"shapes", shapes}},
               2)
        << "\n";
  }
  return 0;
}

int plan(const Context& ctx, const PlanOptions& o) {
  const hw::Catalog catalog = hw::Catalog::load(ctx.configs_dir);
  const workloads::Scenario s = workloads::load_scenario(o.scenario, o.overrides, catalog);
  if (!s.serving) return plan_training(s, {o.objective, o.top, o.json_path});
  if (!o.objective.empty() && o.objective != "rate")
    throw ConfigError("serving plans maximise the request rate within the SLO", {"<command line>", 0, "--objective"},
                      "use --objective rate or leave it out");
  try {
    return plan_serving(s, o);
  } catch (const PlanError& e) {
    if (!e.where().file.empty()) throw;
    workloads::rethrow_located(e, s);
  }
}

}  // namespace

void add_plan_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan", "training: search parallel plans (ranked table); serving: highest request rate within the SLO per deployment shape");
  cmd->add_option("scenario", opts->scenario, "scenario YAML file")->required();
  cmd->add_option("--set", opts->overrides, "override a scenario key: --set serving.slo.ttft=300ms (repeatable)");
  cmd->add_option("--objective", opts->objective, "training: throughput (default), cost_per_token, energy_per_token, iteration_time, pareto_cost, pareto_energy; serving: rate");
  cmd->add_option("--top", opts->top, "show the best K shapes");
  cmd->add_option("--json", opts->json_path, "write the results as JSON to this file");
  cmd->add_option("--gpus", opts->gpus, "GPU budget of the shape comparison (default: the scenario's deployment)");
  cmd->add_option("--tolerance", opts->tolerance, "relative tolerance of the rate bisection")->check(CLI::Range(1e-4, 0.5));
  cmd->add_flag("!--no-shapes", opts->shapes, "only the scenario's own deployment");
  cmd->add_option("--rates", opts->rates, "also report SLO attainment of every shape at these request rates (req/s)")
      ->delimiter(',');
  cmd->callback([&ctx, opts] { ctx.handler = [&ctx, opts] { return plan(ctx, *opts); }; });
}

}  // namespace exasim::cli
