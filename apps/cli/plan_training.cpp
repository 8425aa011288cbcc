#include "apps/cli/plan_training.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "hw/config/json_text.hpp"
#include "apps/cli/point_executor.hpp"
#include "apps/cli/progress_bar.hpp"
#include "apps/cli/table.hpp"
#include "hw/error.hpp"
#include "hw/units.hpp"
#include "workloads/planner/plan_search.hpp"
#include "workloads/planner/power_whatif.hpp"
#include "workloads/training/pipeline_schedule.hpp"

namespace exasim::cli {

namespace {

namespace pl = workloads::planner;
using units::Dimension;

std::string gib(double bytes) { return fmt_fixed(bytes / (1024.0 * 1024 * 1024), 1); }

// A time to train; "-" without a token budget.
std::string train_days(double s) { return s > 0 ? fmt_long_duration(s) : "-"; }

void print_plans(std::ostream& out, const pl::SearchResult& r) {
  Table t({"#", "plan", "iteration", "tokens/s", "MFU", "memory GiB", "W/GPU", "$/M tokens", "J/token", "to train", "est. #", ""});
  for (std::size_t c = 2; c < 11; ++c) t.set_align_right(c);
  for (std::size_t i = 0; i < r.plans.size(); ++i) {
    const pl::RankedPlan& p = r.plans[i];
    const auto& j = p.report;
    std::string note = p.requested ? "scenario's plan" : "";
    if (p.pareto) note = note.empty() ? "Pareto" : note + ", Pareto";
    t.add_row({std::to_string(i + 1), pl::describe(p.candidate), units::format(p.simulated.iteration_time_s, Dimension::kTime, 4),
               fmt_fixed(p.simulated.tokens_per_s, 0), fmt_percent(j["mfu"].get<double>(), 1),
               gib(j["memory"]["peak_per_gpu_bytes"].get<double>()), fmt_fixed(j["power"]["per_gpu_w"].get<double>(), 0),
               fmt_fixed(p.simulated.usd_per_million_tokens, 3), fmt_fixed(p.simulated.energy_per_token_j, 3),
               train_days(p.simulated.time_to_train_s), p.estimate_rank ? std::to_string(p.estimate_rank) : "-", note});
  }
  t.print(out);
}

// What differs between two plans' settings, "tp 8->4, mb 1->2".
std::string setting_changes(const pl::Candidate& a, const pl::Candidate& b) {
  std::string s;
  auto diff = [&](const char* name, const std::string& x, const std::string& y) {
    if (x != y) s += (s.empty() ? "" : ", ") + std::string(name) + " " + x + " vs " + y;
  };
  const auto& sched = workloads::pipeline_schedules();
  const auto rc = [](models::Recompute r) { return r == models::Recompute::kNone ? "none" : r == models::Recompute::kSelective ? "selective" : "full"; };
  diff("tp", std::to_string(a.tp), std::to_string(b.tp));
  diff("pp", std::to_string(a.pp), std::to_string(b.pp));
  diff("dp", std::to_string(a.dp), std::to_string(b.dp));
  diff("vpp", std::to_string(a.vpp), std::to_string(b.vpp));
  diff("micro-batch", std::to_string(a.micro_batch), std::to_string(b.micro_batch));
  diff("schedule", sched[a.schedule].name, sched[b.schedule].name);
  diff("zero", std::to_string(a.zero), std::to_string(b.zero));
  const auto rcl = [&](const pl::Candidate& c) {
    return std::string(rc(c.recompute)) + (c.recompute_layers > 0 ? " of the first " + std::to_string(c.recompute_layers) + " layers a chunk" : "");
  };
  diff("recompute", rcl(a), rcl(b));
  diff("sequence parallel", a.sequence_parallel ? "on" : "off", b.sequence_parallel ? "on" : "off");
  diff("cp", std::to_string(a.cp), std::to_string(b.cp));
  diff("ep", std::to_string(a.ep), std::to_string(b.ep));
  diff("etp", std::to_string(a.etp), std::to_string(b.etp));
  diff("offload", pl::offload_modes()[a.offload], pl::offload_modes()[b.offload]);
  diff("split", std::to_string(a.first_stage_layers) + "/" + std::to_string(a.last_stage_layers),
       std::to_string(b.first_stage_layers) + "/" + std::to_string(b.last_stage_layers));
  return s.empty() ? "the same settings" : s;
}

void explain(std::ostream& out, const pl::SearchResult& r) {
  if (r.plans.size() < 2) return;
  const pl::RankedPlan &a = r.plans[0], &b = r.plans[1];
  const auto& ja = a.report;
  const auto& jb = b.report;
  auto part = [&](const char* key, const char* label) {
    const double d = ja["time_breakdown_s"][key].get<double>() - jb["time_breakdown_s"][key].get<double>();
    return std::string(label) + " " + (d < 0 ? "-" : "+") + fmt_fixed(std::abs(d) * 1e3, 1) + " ms";
  };
  const double ta = a.simulated.iteration_time_s, tb = b.simulated.iteration_time_s;
  out << "\nWhy #1 beats #2 (" << setting_changes(a.candidate, b.candidate) << "):\n  ";
  if (r.objective == "throughput" || r.objective == "iteration_time" || r.objective.starts_with("pareto")) {
    out << "iteration " << units::format(ta, Dimension::kTime, 4) << " vs " << units::format(tb, Dimension::kTime, 4) << " ("
        << fmt_percent(tb / ta - 1, 2) << " more throughput)";
  } else if (r.objective == "time_to_train") {
    out << train_days(a.simulated.time_to_train_s) << " vs " << train_days(b.simulated.time_to_train_s)
        << " to train, with failures (iteration " << units::format(ta, Dimension::kTime, 4) << " vs "
        << units::format(tb, Dimension::kTime, 4) << ")";
  } else if (r.objective == "cost_per_token") {
    out << "$" << fmt_fixed(a.simulated.usd_per_million_tokens, 4) << " vs $" << fmt_fixed(b.simulated.usd_per_million_tokens, 4)
        << " per million tokens";
  } else {
    out << fmt_fixed(a.simulated.energy_per_token_j, 4) << " vs " << fmt_fixed(b.simulated.energy_per_token_j, 4) << " J per token";
  }
  out << "; time split of #1 against #2: " << part("compute", "compute") << ", " << part("exposed_comm", "exposed communication")
      << ", " << part("bubble", "pipeline bubble") << ", " << part("optimizer", "optimizer") << ".\n  memory per GPU "
      << gib(ja["memory"]["peak_per_gpu_bytes"].get<double>()) << " vs " << gib(jb["memory"]["peak_per_gpu_bytes"].get<double>())
      << " GiB; power per GPU " << fmt_fixed(ja["power"]["per_gpu_w"].get<double>(), 0) << " vs "
      << fmt_fixed(jb["power"]["per_gpu_w"].get<double>(), 0) << " W.";
  if (ta == tb && a.simulated.memory_headroom_bytes != b.simulated.memory_headroom_bytes) out << " Tied: #1 leaves more memory free.";
  out << "\n";
}

void print_whatif(std::ostream& out, const pl::PowerWhatIf& w) {
  out << "\nPower-capped what-if (facility budget " << units::format(w.facility_budget_w, Dimension::kPower, 4)
      << ", servers provisioned at the GPU cap; fleet throughput assumes the per-GPU rate carries over):\n";
  Table t({"GPU cap", "clock", "iteration", "tokens/s", "loss", "W/GPU avg", "W/GPU peak", "server kW", "servers", "fleet tokens/s"});
  for (std::size_t c = 0; c < 10; ++c) t.set_align_right(c);
  for (const pl::CapRow& r : w.rows)
    t.add_row({units::format(r.cap_w, Dimension::kPower, 4) + (r.capped ? "" : " (TDP)"), fmt_percent(r.mean_clock, 1),
               units::format(r.iteration_time_s, Dimension::kTime, 4), fmt_fixed(r.tokens_per_s, 0), fmt_percent(r.throughput_loss, 1),
               fmt_fixed(r.gpu_power_w, 0), fmt_fixed(r.peak_gpu_w, 0), fmt_fixed(r.server_provision_w / 1e3, 2),
               std::to_string(r.servers), fmt_fixed(r.fleet_tokens_per_s, 0)});
  t.print(out);
}

nlohmann::json plans_json(const workloads::Scenario& s, const pl::SearchResult& r) {
  nlohmann::json plans = nlohmann::json::array();
  for (std::size_t i = 0; i < r.plans.size(); ++i) {
    const pl::RankedPlan& p = r.plans[i];
    nlohmann::json j = p.report;
    j["rank"] = i + 1;
    j["estimate_rank"] = p.estimate_rank;
    j["scenario_plan"] = p.requested;
    j["pareto"] = p.pareto;
    if (p.simulated.time_to_train_s > 0) j["time_to_train_s"] = p.simulated.time_to_train_s;
    j["estimate"] = {{"iteration_time_s", p.estimate.iteration_time_s}, {"tokens_per_s", p.estimate.tokens_per_s},
                     {"memory_peak_per_gpu_bytes", p.estimate.memory.peak_bytes}, {"power_per_gpu_w", p.estimate.gpu_power_w},
                     {"usd_per_million_tokens", p.estimate.usd_per_million_tokens}, {"energy_per_token_j", p.estimate.energy_per_token_j},
                     {"time_breakdown_s", {{"compute", p.estimate.compute_s}, {"bubble", p.estimate.bubble_s},
                                           {"exposed_comm", p.estimate.exposed_comm_s}, {"optimizer", p.estimate.optimizer_s}}}};
    plans.push_back(std::move(j));
  }
  return {{"scenario", s.name},
          {"kind", "training-plan"},
          {"objective", r.objective},
          {"memory_margin", r.memory_margin},
          {"candidates", {{"enumerated", r.enumerated}, {"runnable", r.runnable}, {"duplicates", r.duplicates}, {"rejected", r.rejected}}},
          {"scenario_plan_rejected", r.requested_rejections},
          {"plans", plans}};
}

}  // namespace

int plan_training(const workloads::Scenario& s, const TrainingPlanRequest& req) {
  const std::unique_ptr<PointExecutor> exec = make_point_executor();
  pl::PlannerInputs in = pl::PlannerInputs::from(s);
  in.ranks = {};  // the search compares plans under symmetry (every rank of every candidate would not scale)
  pl::SearchOptions o;
  o.objective = req.objective.empty() ? "throughput" : req.objective;
  pl::find_objective(o.objective);  // unknown names fail before any work
  o.top_k = req.top > 0 ? req.top : 10;
  o.also_simulate = {pl::candidate_of(*s.training)};
  ProgressBar bar;
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto t1 = t0;
  o.progress = [&](const char* phase, std::size_t done, std::size_t total) {
    if (std::string(phase) == "simulate" && t1 == t0) t1 = Clock::now();
    if (exec->is_root()) bar.update(phase, done, total);
  };
  o.map = [&](std::size_t n, const std::function<std::string(std::size_t)>& job) {
    t1 = Clock::now();
    return exec->map(n, job);
  };
  pl::SearchResult r;
  try {
    r = pl::search_plans(in, o);
  } catch (const PlanError& e) {
    if (!e.where().file.empty()) throw;
    workloads::rethrow_located(e, s);
  }
  const auto t2 = Clock::now();
  std::optional<pl::PowerWhatIf> whatif;
  if (in.power.facility_budget_w > 0 && !r.plans.empty()) {
    const auto& best = r.plans.front().candidate;
    const workloads::TrainingPlan plan(in.model, pl::candidate_config(in.base, best), in.cluster.gpu_count(),
                                       std::max(in.cluster.gpus_per_node, best.tp));
    whatif = pl::power_cap_whatif(in, plan, [&](std::size_t n, const auto& job) { return exec->map(n, job); });
  }
  if (!exec->is_root()) return 0;
  const double est_s = std::chrono::duration<double>(t1 - t0).count(), sim_s = std::chrono::duration<double>(t2 - t1).count();
  std::cout << "exasim plan: " << s.name << " — " << s.model.name << " on " << s.cluster.gpu_count() << " x " << s.cluster.gpu.name
            << "; objective " << r.objective << ", memory margin " << fmt_percent(r.memory_margin, 0) << "\n"
            << r.enumerated << " candidates, " << r.runnable << " runnable (" << r.duplicates
            << " the same to the simulator as another); the best " << o.top_k
            << " by closed-form estimate simulated by the engine (" << s.simulation.fidelity << ")\n";
  if (s.simulation.all_ranks)
    std::cout << "(one GPU per stage stands for its peers here; simulation.all_ranks applies to exasim run and sweep)\n";
  if (r.enumerated == 0) {
    std::cout << "plan_space admits no plan here: tp x pp x cp x dp must make the " << s.cluster.gpu_count()
              << " GPUs, dp divide global_batch, cp split seq_len into 2 cp chunks, ep divide the experts and "
                 "tp x cp x dp; widen plan_space's pinned values\n";
  } else if (r.runnable == 0) {
    std::cout << "no candidate can run; rejected by";
    for (const auto& [key, count] : r.rejected) std::cout << " " << key << " (" << count << ")";
    std::cout << "\n";
  }
  std::cout << "\n";
  print_plans(std::cout, r);
  explain(std::cout, r);
  for (const std::string& why : r.requested_rejections) std::cout << "\nthe scenario's own plan cannot run: " << why << "\n";
  if (whatif) print_whatif(std::cout, *whatif);
  std::fprintf(stderr, "search: %zu candidates estimated in %.3f s (%.0f candidates/s), %zu plans simulated in %.3f s%s\n", r.enumerated,
               est_s, est_s > 0 ? static_cast<double>(r.enumerated) / est_s : 0.0, r.plans.size(), sim_s,
               exec->ranks() > 1 ? (" over " + std::to_string(exec->ranks()) + " MPI ranks").c_str() : "");
  if (!req.json_path.empty()) {
    std::ofstream out(req.json_path);
    if (!out) throw IoError("cannot write --json file", {req.json_path, 0, ""}, "check that the folder exists and is writable");
    nlohmann::json j = plans_json(s, r);
    if (whatif) j["power_whatif"] = pl::power_whatif_json(*whatif);
    out << config::to_json_text(j, 2) << "\n";
  }
  return 0;
}

}  // namespace exasim::cli
