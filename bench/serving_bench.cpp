// Serving simulation speed and memory: (1) the full Azure 2023 conversation trace (19,366
// requests) on 4 replicas of Llama-2-70B TP4 (configs/scenarios/llama2-70b-h100-serving.yaml);
// (2) synthetic Poisson workloads of 10 k, 100 k and 1 M requests on 8 replicas of Llama-3.1-8B,
// printing wall time and the process's peak resident memory after each, which must stay flat as
// the request count grows (sources stream, metrics are constant-size histograms). Always exits 0.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "hw/catalog.hpp"
#include "traces/request_source_factory.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/serving/serving_simulation.hpp"

namespace {

using namespace exasim;
namespace sv = workloads::serving;
using Clock = std::chrono::steady_clock;

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: KiB
}

struct Timed {
  sv::ServingResult result;
  double wall_s = 0;
};

Timed run(const workloads::Scenario& s) {
  const sv::ServingConfig& cfg = *s.serving_config;
  auto src = traces::make_request_source(cfg.workload, s.simulation.seed, cfg.base_dir);
  const auto t0 = Clock::now();
  const sv::ServingInputs in{s.model, s.cluster, cfg, s.calibration.collective, s.cost, s.simulation.seed, nullptr, {}};
  Timed t{sv::simulate_serving(in, *src), 0};
  t.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return t;
}

void print(const char* what, const Timed& t) {
  const auto& r = t.result;
  std::printf("%-44s %9llu requests %9lld iterations  wall %7.3f s  %8.0f requests/s wall  peak RSS %7.1f MiB"
              "  (TTFT p90 %.1f ms, TPOT p90 %.1f ms)\n",
              what, static_cast<unsigned long long>(r.completed + r.rejected), static_cast<long long>(r.iterations),
              t.wall_s, static_cast<double>(r.completed) / t.wall_s, peak_rss_mib(), r.ttft.p90 * 1e3, r.tpot.p90 * 1e3);
}

}  // namespace

int main() {
  const std::string root = EXASIM_SOURCE_DIR;
  const hw::Catalog catalog = hw::Catalog::load(root + "/configs");
  std::printf("serving bench (targets: Azure conv trace < 5 s, 1 M synthetic requests < 60 s, flat peak memory)\n");
  try {
    const auto azure = workloads::load_scenario(root + "/configs/scenarios/llama2-70b-h100-serving.yaml", {}, catalog);
    print("azure-2023 conv, llama2-70b 4 x TP4 H100", run(azure));
  } catch (const Error& e) {
    std::printf("azure trace run skipped: %s\n", e.describe().c_str());
  }
  for (const long long n : {10000LL, 100000LL, 1000000LL}) {
    const std::string yaml =
        "name: synthetic\ncluster: {gpu: H100-SXM5-80GB, gpus_per_node: 8, nodes: 1}\nmodel: llama3.1-8b\n"
        "serving: {replicas: 8, router: least-outstanding, workload: {arrival: poisson, rate_per_s: 200, requests: " +
        std::to_string(n) + ", prompt_tokens: 512, output_tokens: 128}}\n";
    const auto s = workloads::scenario_from_node(config::load_string(yaml, "bench"), catalog, ".");
    const std::string what = "poisson 200/s, " + std::to_string(n) + " requests, llama3.1-8b 8 x TP1";
    print(what.c_str(), run(s));
  }
  return 0;
}
