// `exasim run SCENARIO.yaml`: simulate a scenario, print a summary, write JSON and a trace.
#include <cmath>
#include <fstream>
#include <iostream>

#include "apps/cli/commands.hpp"
#include "hw/config/json_text.hpp"
#include "apps/cli/serving_summary.hpp"
#include "apps/cli/table.hpp"
#include "hw/error.hpp"
#include "hw/units.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/request_source_factory.hpp"
#include "workloads/planner/plan_evaluation.hpp"
#include "workloads/planner/planner_inputs.hpp"
#include "workloads/reliability/goodput.hpp"
#include "workloads/serving/serving_report.hpp"
#include "workloads/training/training_report.hpp"

namespace exasim::cli {

namespace {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string json_path, trace_path, report_path, requests_path;
};

std::ofstream open_output(const std::string& path, const std::string& flag) {
  std::ofstream out(path);
  if (!out) throw IoError("cannot write " + flag + " file", {path, 0, ""}, "check that the folder exists and is writable");
  return out;
}

std::string fmt(double v, units::Dimension d) { return units::format(v, d, 4); }

void print_summary(std::ostream& out, const workloads::Scenario& s, const workloads::TrainingPlan& plan,
                   const workloads::TrainingResult& r) {
  using units::Dimension;
  const auto& p = plan.par();
  out << "exasim: " << s.name << " — " << s.model.name << " on " << s.cluster.gpu_count() << " x " << s.cluster.gpu.name
      << " (" << s.cluster.nodes << " nodes), tp " << p.tp << " pp " << p.pp << " dp " << p.dp << (p.cp > 1 ? " cp " + std::to_string(p.cp) : "") << (p.ep > 1 ? " ep " + std::to_string(p.ep) : "")
      << (p.vpp > 1 ? " vpp " + std::to_string(p.vpp) : "") << ", "
      << plan.config().pipeline_schedule << ", " << plan.micro_batches() << " micro-batches of " << plan.config().micro_batch
      << "\n\n";
  Table t({"metric", "value"});
  t.set_align_right(1);
  const auto& b = r.breakdown;
  const auto pct = [&](double x) { return fmt(x, Dimension::kTime) + " (" + fmt_percent(x / r.iteration_time_s, 1) + ")"; };
  t.add_row({"iteration time", fmt(r.iteration_time_s, Dimension::kTime)});
  t.add_row({"throughput", fmt_fixed(r.tokens_per_s, 0) + " tokens/s, " + fmt_fixed(r.samples_per_s, 2) + " samples/s"});
  t.add_row({"model TFLOP/s per GPU", fmt_fixed(r.tflops_per_gpu, 1)});
  t.add_row({"MFU / HFU", fmt_percent(r.mfu, 1) + " / " + fmt_percent(r.hfu, 1)});
  t.add_row({"  compute", pct(b.compute)});
  t.add_row({"  exposed communication", pct(b.exposed_comm)});
  t.add_row({"  pipeline bubble", pct(b.bubble)});
  t.add_row({"  optimizer", pct(b.optimizer)});
  if (plan.config().offload != "none") t.add_row({"  offload (exposed)", pct(b.offload)});
  if (b.host > 0) t.add_row({"  host (exposed)", pct(b.host)});
  const auto& m = r.memory.peak();
  t.add_row({"memory per GPU (peak)", fmt(m.total(), Dimension::kBytes) + " of " + fmt(r.memory_capacity_bytes, Dimension::kBytes)});
  t.add_row({"  weights / grads / optimizer", fmt(m.weights, Dimension::kBytes) + " / " + fmt(m.gradients, Dimension::kBytes) +
                                                  " / " + fmt(m.optimizer, Dimension::kBytes)});
  t.add_row({"  activations", fmt(m.activations, Dimension::kBytes) + " (" + std::to_string(m.in_flight) + " micro-batches)"});
  if (m.gathered > 0) t.add_row({"  gathered layers (ZeRO-3)", fmt(m.gathered, Dimension::kBytes)});
  t.add_row({"  NCCL buffers / fragmentation", fmt(m.buffers, Dimension::kBytes) + " / " + fmt(m.fragmentation, Dimension::kBytes)});
  t.add_row({"power (cluster, IT)", fmt(r.power_avg_w, Dimension::kPower) + " (" + fmt(r.gpu_power_w, Dimension::kPower) + " per GPU)"});
  t.add_row({"energy per token", fmt(r.energy_per_token_j, Dimension::kEnergy)});
  t.add_row({"cost", "$" + fmt_fixed(r.cost.usd_per_hour, 2) + "/h, $" + fmt_fixed(r.cost.usd_per_million_tokens, 4) + " per M tokens"});
  t.print(out);
  out << "\n" << r.tasks << " tasks, " << r.events << " events; kernel parameters: " << s.calibration.kernel.source
      << "; collective parameters: " << s.calibration.collective.source << "\n";
}

void print_goodput(std::ostream& out, const workloads::reliability::GoodputReport& g) {
  const auto& e = g.simulated;
  const auto& c = g.config;
  const auto& k = g.costs;
  out << "\nreliability: an interruption every " << fmt_long_duration(k.job_mtbf_s)
      << (c.failures ? " (" + c.failures->name + " rates x this job's GPUs, nodes and NICs)" : "") << ", checkpoints blocking "
      << fmt(k.checkpoint_write_s, units::Dimension::kTime);
  if (k.checkpoint_bound != "given")
    out << " (" << fmt(k.checkpoint_bytes, units::Dimension::kBytes) << " to " << c.storage->name << ", bound by " << k.checkpoint_bound << ")";
  if (k.checkpoint_upload_s > 0) out << ", asynchronous: durable " << fmt(k.checkpoint_upload_s, units::Dimension::kTime) << " later";
  out << ", restarts of " << fmt_long_duration(k.restart_s);
  if (c.restart) out << " (" << fmt(k.checkpoint_load_s, units::Dimension::kTime) << " of it the checkpoint's load)";
  if (c.elastic) {
    out << "; elastic: ";
    if (g.elastic.replicas > 0)
      out << "a failure takes one of " << g.elastic.replicas << " data-parallel replicas out for " << fmt_long_duration(c.elastic->repair_s)
          << ", the job paused " << fmt_long_duration(c.elastic->reconfigure_s) << " as it leaves and rejoins";
    else
      out << "not applied (" << g.elastic.why_not << "): every failure stops the job";
  }
  out << "; " << c.trials << " trials " << (e.time_to_train_s ? "until trained" : "over " + fmt_long_duration(c.horizon_s)) << "\n";
  Table t({"goodput", "value"});
  t.set_align_right(1);
  t.add_row({"useful fraction of wall time", fmt_percent(e.fraction, 2) + " +- " + fmt_percent(e.fraction_ci95, 2) +
                                                 " (closed form " + fmt_percent(g.expected_fraction, 2) + ")"});
  t.add_row({"interruptions per day", fmt_fixed(e.interruptions_per_day, 2)});
  const long long iterations = std::llround(g.checkpoint_interval_s / g.iteration_s);
  t.add_row({"checkpoint interval (work)", fmt_long_duration(g.checkpoint_interval_s) + " = " + std::to_string(iterations) +
                                               (iterations == 1 ? " iteration" : " iterations") + " (optimal " +
                                               fmt_long_duration(g.optimal_checkpoint_interval_s) + ")"});
  const auto& s = e.mean_split;
  const auto share = [&](double x) { return fmt_percent(x / s.wall(), 2); };
  t.add_row({"  checkpoint writes", share(s.checkpoint)});
  t.add_row({"  work lost to failures", share(s.lost)});
  t.add_row({c.elastic && g.elastic.replicas > 0 ? "  pauses to reconfigure, restarts" : "  restarts", share(s.restart)});
  if (c.elastic && g.elastic.replicas > 0) t.add_row({"  replicas out for repair", share(s.degraded)});
  if (e.time_to_train_s)
    t.add_row({"time to train " + fmt_fixed(*c.train_tokens / 1e9, 1) + " B tokens",
               fmt_long_duration(*e.time_to_train_s) + " +- " + fmt_long_duration(*e.time_to_train_ci95)});
  t.print(out);
  out << "\n";
}

// Serving: the request source streams the workload; per-request records go straight to the
// --requests file as requests finish, so memory stays flat with the trace length.
int run_serving(const workloads::Scenario& s, const RunOptions& o) {
  namespace sv = workloads::serving;
  const sv::ServingConfig& cfg = *s.serving_config;
  if (!o.trace_path.empty())
    throw ConfigError("--trace is not written for serving runs yet", {"<command line>", 0, "--trace"}, "use --requests F for per-request records");
  auto source = traces::make_request_source(cfg.workload, s.simulation.seed, cfg.base_dir);
  const std::string workload = source->describe();
  std::ofstream requests;
  if (!o.requests_path.empty()) {
    requests = open_output(o.requests_path, "--requests");
    sv::write_request_csv_header(requests);
  }
  sv::ServingInputs in{s.model, s.cluster, cfg, s.calibration.collective, s.cost, s.simulation.seed, nullptr, {}};
  if (requests.is_open()) in.on_request = [&requests](const sv::RequestRecord& r) { sv::write_request_csv_row(requests, r); };
  sv::ServingResult r;
  try {
    r = sv::simulate_serving(in, *source);
  } catch (const PlanError& e) {
    if (!e.where().file.empty()) throw;
    workloads::rethrow_located(e, s);
  }
  print_serving_summary(std::cout, s, cfg, r, workload);
  if (!o.json_path.empty()) open_output(o.json_path, "--json") << config::to_json_text(sv::serving_result_json(s, r, workload), 2) << "\n";
  if (!o.report_path.empty()) {
    auto out = open_output(o.report_path, "--report");
    print_serving_summary(out, s, cfg, r, workload);
  }
  return 0;
}

int run(const Context& ctx, const RunOptions& o) {
  const hw::Catalog catalog = hw::Catalog::load(ctx.configs_dir);
  const workloads::Scenario s = workloads::load_scenario(o.scenario, o.overrides, catalog);
  if (s.serving) return run_serving(s, o);
  if (!o.requests_path.empty())
    throw ConfigError("--requests writes per-request records of a serving run", {"<command line>", 0, "--requests"},
                      "give a scenario with a serving: section");
  try {
    const workloads::TrainingPlan plan(s.model, *s.training, s.cluster.gpu_count(), s.cluster.gpus_per_node);
    // The planner's evaluation of one plan: the engine's result with power read off the timeline
    // (and the scenario's power cap applied), so `run` and `plan` report the same numbers.
    const auto inputs = workloads::planner::PlannerInputs::from(s);
    const workloads::planner::PlanEvaluation e = workloads::planner::evaluate_plan(inputs, plan);
    const workloads::TrainingResult& r = e.result;
    const std::optional<workloads::reliability::GoodputReport>& goodput = e.goodput;
    print_summary(std::cout, s, plan, r);
    if (goodput) print_goodput(std::cout, *goodput);
    if (!o.json_path.empty()) open_output(o.json_path, "--json") << config::to_json_text(workloads::planner::evaluation_json(s, plan, e), 2) << "\n";
    if (!o.report_path.empty()) {
      auto out = open_output(o.report_path, "--report");
      print_summary(out, s, plan, r);
      if (goodput) print_goodput(out, *goodput);
    }
    if (!o.trace_path.empty()) {
      auto out = open_output(o.trace_path, "--trace");
      traces::write_chrome_trace(r.graph->graph, *r.timeline, out);
    }
  } catch (const PlanError& e) {
    if (!e.where().file.empty()) throw;
    workloads::rethrow_located(e, s);
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "simulate a training or serving scenario and print a summary");
  cmd->add_option("scenario", opts->scenario, "scenario YAML file")->required();
  cmd->add_option("--set", opts->overrides, "override a scenario key: --set training.micro_batch=2 (repeatable)");
  cmd->add_option("--json", opts->json_path, "write the results as JSON (SI units) to this file");
  cmd->add_option("--trace", opts->trace_path, "write a Chrome/Perfetto trace of the simulated timeline to this file");
  cmd->add_option("--report", opts->report_path, "write the summary table to this file");
  cmd->add_option("--requests", opts->requests_path, "serving: write one CSV line per finished request to this file");
  cmd->callback([&ctx, opts] { ctx.handler = [&ctx, opts] { return run(ctx, *opts); }; });
}

}  // namespace exasim::cli
