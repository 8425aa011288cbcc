// Training simulation speed, symmetry against every rank simulated (simulation.all_ranks): wall
// time, tasks and events of one iteration, and whether the two agree. The training issue's
// targets for Llama 3.1 405B on 16,384 H100 (TP8 PP16 DP128, interleaved): under 5 s with
// symmetry, under 60 s with all ranks. Exits 1 when a scenario cannot be loaded.
//   exasim-training-bench [SCENARIO.yaml ...]   (default: the Llama 16k and GPT-3 1024-GPU scenarios)
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "peak_memory.hpp"
#include "scenario_args.hpp"
#include "hw/catalog.hpp"
#include "workloads/planner/planner_inputs.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void bench(const hw::Catalog& catalog, const std::string& path) {
  const Scenario s = load_scenario(path, {}, catalog);
  const planner::PlannerInputs in = planner::PlannerInputs::from(s);
  const TrainingPlan plan(in.model, *s.training, in.cluster.gpu_count(), in.cluster.gpus_per_node);
  std::printf("%s (%d GPUs, %s fidelity)\n", s.name.c_str(), in.cluster.gpu_count(), in.network.backend.c_str());
  double times[2] = {0, 0}, iteration[2] = {0, 0};
  for (int all = 0; all < 2; ++all) {
    const auto t0 = Clock::now();
    const TrainingResult r = simulate_training(
        {plan, in.cluster, in.calibration.kernel, in.calibration.collective, in.cost, in.network, {all == 1, {}}});
    times[all] = since(t0);
    iteration[all] = r.iteration_time_s;
    std::printf("  %-10s %8.3f s wall  %11zu tasks  %11llu events  %8.2f M events/s  iteration %.6f s\n",
                all ? "all ranks" : "symmetry", times[all], r.tasks, static_cast<unsigned long long>(r.events),
                double(r.events) / times[all] / 1e6, r.iteration_time_s);
  }
  std::printf("  all ranks / symmetry: %.0fx wall; iterations differ by %.2e (relative); peak RSS so far %.0f MiB\n",
              times[1] / times[0], (iteration[1] - iteration[0]) / iteration[0], benchmarks::max_rss_mib());
}

}  // namespace

int main(int argc, char** argv) {
  const hw::Catalog catalog = hw::Catalog::load(hw::default_configs_dir());
  const std::string dir = std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/";
  return benchmarks::run_scenarios(argc, argv, {dir + "llama3.1-405b-h100-16k.yaml", dir + "gpt3-175b-a100-1024.yaml"},
                                   [&](const std::string& path) { bench(catalog, path); });
}
