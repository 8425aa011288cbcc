// Plan-search speed: for each scenario, the stage-1 pieces separately (enumeration, constraint
// checks, closed-form estimates with warm per-layer tables, the cold tables) and the whole
// search; prints candidates per second. Exits 1 when a scenario cannot be loaded.
//   exasim-planner-bench [SCENARIO.yaml ...]   (default: the GPT-3 1024-GPU, Llama 16k and DeepSeek-V3 scenarios)
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "scenario_args.hpp"
#include "hw/catalog.hpp"
#include "workloads/planner/plan_constraints.hpp"
#include "workloads/planner/plan_evaluation.hpp"
#include "workloads/planner/plan_search.hpp"

using namespace exasim;
using namespace exasim::workloads::planner;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void bench(const hw::Catalog& catalog, const std::string& path) {
  const workloads::Scenario s = workloads::load_scenario(path, {}, catalog);
  const PlannerInputs in = PlannerInputs::from(s);
  auto t0 = Clock::now();
  const std::vector<Candidate> all = enumerate_candidates(in.space, in.model, in.base, in.cluster);
  const double t_enum = since(t0);
  Estimator est(in);
  LoweringProbe probe(in);
  std::vector<Candidate> ok;
  t0 = Clock::now();
  for (const Candidate& c : all)
    if (const CheckResult r = check_candidate(est, probe, c, 0.0); r.runnable) ok.push_back(r.candidate);
  const double t_check = since(t0);
  t0 = Clock::now();
  double sink = 0;
  for (const Candidate& c : ok) sink += est.estimate(c).iteration_time_s;  // cold: measures per-layer tables
  const double t_cold = since(t0);
  t0 = Clock::now();
  for (const Candidate& c : ok) sink += est.estimate(c).iteration_time_s;  // warm: the closed form alone
  const double t_warm = since(t0);
  // One plan (the scenario's): the engine alone, then with timeline power, cost.
  const workloads::TrainingPlan plan(in.model, *s.training, in.cluster.gpu_count(), in.cluster.gpus_per_node);
  t0 = Clock::now();
  const auto sim = workloads::simulate_training({plan, in.cluster, in.calibration.kernel, in.calibration.collective, in.cost, in.network});
  const double t_sim = since(t0);
  t0 = Clock::now();
  const PlanEvaluation ev = evaluate_plan(in, plan);
  const double t_eval = since(t0);
  std::printf("  scenario plan: simulate_training %.3f s (%zu tasks), evaluate_plan %.3f s\n", t_sim, sim.tasks, t_eval);
  t0 = Clock::now();
  SearchOptions o;
  const SearchResult r = search_plans(in, o);
  const double t_search = since(t0);
  std::printf("%s: %zu candidates, %zu runnable, %zu per-layer tables\n", s.name.c_str(), all.size(), ok.size(), est.layer_cost_entries());
  std::printf("  enumerate %8.4f s  %12.0f candidates/s\n", t_enum, double(all.size()) / t_enum);
  std::printf("  check     %8.4f s  %12.0f candidates/s\n", t_check, double(all.size()) / t_check);
  std::printf("  estimate  %8.4f s  %12.0f candidates/s (cold: incl. measuring per-layer tables)\n", t_cold, double(ok.size()) / t_cold);
  std::printf("  estimate  %8.4f s  %12.0f candidates/s (warm: closed form only)\n", t_warm, double(ok.size()) / t_warm);
  std::printf("  search    %8.4f s  %12.0f candidates/s (stage 1 + %zu simulated plans; best %.4f s/iteration)  [%g]\n", t_search,
              double(all.size()) / t_search, r.plans.size(), r.plans.empty() ? 0.0 : r.plans.front().simulated.iteration_time_s,
              sink > 0 ? 0.0 : 1.0);
}

}  // namespace

int main(int argc, char** argv) {
  const hw::Catalog catalog = hw::Catalog::load(hw::default_configs_dir());
  const std::string dir = std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/";
  return benchmarks::run_scenarios(argc, argv,
                                   {dir + "gpt3-175b-a100-1024.yaml", dir + "llama3.1-405b-h100-16k.yaml",
                                    dir + "deepseek-v3-gb200-256.yaml"},
                                   [&](const std::string& path) { bench(catalog, path); });
}
