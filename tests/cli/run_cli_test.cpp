// `exasim run`: the summary, the --json keys DESIGN.md promises, and a --trace that Perfetto can
// open (Chrome trace-event JSON: one complete event per simulated task).
#include <doctest/doctest.h>

#include "approx.hpp"
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "cli_runner.hpp"

using namespace exasim::testing;

namespace {

std::string tmp(const std::string& name) { return (std::filesystem::temp_directory_path() / name).string(); }

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

const std::string kScenario = std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/gpt3-175b-a100-1024.yaml";

}  // namespace

TEST_CASE("run: the default scenario prints its summary and writes every JSON key") {
  const std::string json = tmp("exasim_run_test.json");
  const CliResult r = run_cli("run '" + kScenario + "' --json '" + json + "'");
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "iteration time"));
  CHECK(contains(r.output, "MFU"));
  const auto j = read_json(json);
  for (const char* key : {"iteration_time_s", "tokens_per_s", "samples_per_s", "tflops_per_gpu", "mfu", "hfu"}) {
    CAPTURE(key);
    CHECK(j.at(key).is_number());
  }
  for (const char* key : {"peak_per_gpu_bytes", "weights", "gradients", "optimizer", "activations"})
    CHECK(j.at("memory").at(key).is_number());
  for (const char* key : {"compute", "exposed_comm", "bubble", "optimizer", "offload"})
    CHECK(j.at("time_breakdown_s").at(key).is_number());
  CHECK(j.at("power").at("avg_w").is_number());
  CHECK(j.at("energy").at("per_iteration_j").is_number());
  CHECK(j.at("energy").at("per_token_j").is_number());
  CHECK(j.at("cost").at("usd_per_hour").is_number());
  CHECK(j.at("cost").at("usd_per_million_tokens").is_number());

  // Internal consistency, by hand: tokens/s = global batch x seq / iteration time, and the
  // breakdown adds up to the iteration.
  const double t = j["iteration_time_s"];
  CHECK(double(j["tokens_per_s"]) == exasim::testing::approx(1536.0 * 2048 / t));
  const auto& b = j["time_breakdown_s"];
  CHECK(double(b["compute"]) + double(b["exposed_comm"]) + double(b["bubble"]) + double(b["optimizer"]) ==
        exasim::testing::approx(t));
  // Cost: 1024 GPUs at $2/h plus the cluster's energy at $0.10/kWh and PUE 1.2.
  const double power_kw = double(j["power"]["avg_w"]) / 1000;
  CHECK(double(j["cost"]["usd_per_hour"]) == exasim::testing::approx(1024 * 2.0 + power_kw * 1.2 * 0.10));
  const auto& m = j["memory"];
  // The peak is its parts: DESIGN.md's four plus NCCL's buffers and the allocator's fragmentation.
  CHECK(double(m["peak_per_gpu_bytes"]) ==
        exasim::testing::approx(double(m["weights"]) + double(m["gradients"]) + double(m["optimizer"]) + double(m["activations"]) +
                        double(m["communication_buffers"]) + double(m["fragmentation"])));
  // tp 8, pp 16, dp 8: three communicators of 64 MiB; 5% of activations and buffers.
  CHECK(double(m["communication_buffers"]) == exasim::testing::approx(3 * 64.0 * 1048576));
  CHECK(double(m["fragmentation"]) == exasim::testing::approx(0.05 * (double(m["activations"]) + double(m["communication_buffers"]))));
}

TEST_CASE("run: same input, same output, bit for bit") {
  const std::string a = tmp("exasim_det_a.json"), b = tmp("exasim_det_b.json");
  REQUIRE(run_cli("run '" + kScenario + "' --json '" + a + "'").status == 0);
  REQUIRE(run_cli("run '" + kScenario + "' --json '" + b + "'").status == 0);
  std::ifstream fa(a), fb(b);
  const std::string sa((std::istreambuf_iterator<char>(fa)), {}), sb((std::istreambuf_iterator<char>(fb)), {});
  CHECK(sa == sb);
}

TEST_CASE("run: --set overrides a key and --trace writes a Chrome trace") {
  const std::string json = tmp("exasim_set_test.json"), trace = tmp("exasim_trace_test.json");
  const CliResult r = run_cli("run '" + kScenario + "' --set training.global_batch=128 --set training.parallelism.pp=16 --json '" +
                              json + "' --trace '" + trace + "'");
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  const auto j = read_json(json);
  CHECK(j["training"]["global_batch"] == 128);
  const auto t = read_json(trace);
  REQUIRE(t.at("traceEvents").is_array());
  std::size_t slices = 0;
  std::set<int> pids;
  for (const auto& e : t["traceEvents"]) {
    if (e.at("ph") == "X") {
      ++slices;
      CHECK(e.at("dur").get<double>() >= 0);
      pids.insert(e.at("pid").get<int>());
    }
  }
  CHECK(slices == j["simulation"]["tasks"].get<std::size_t>());
  CHECK(pids.size() == 16);  // one process per simulated pipeline stage
}

TEST_CASE("run: what-if override of a catalog GPU changes the result") {
  const std::string base = tmp("exasim_whatif_base.json"), fast = tmp("exasim_whatif_fast.json");
  REQUIRE(run_cli("run '" + kScenario + "' --json '" + base + "'").status == 0);
  REQUIRE(run_cli("run '" + kScenario + "' --set cluster.gpu.hbm_bandwidth=4TB/s --json '" + fast + "'").status == 0);
  CHECK(read_json(fast)["iteration_time_s"].get<double>() < read_json(base)["iteration_time_s"].get<double>());
}

TEST_CASE("run: the straggler example simulates every rank, without its straggler it equals the symmetric run") {
  const std::string scenario = std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/llama3.1-70b-h100-straggler.yaml";
  const std::string slow = tmp("exasim_straggler.json"), even = tmp("exasim_straggler_even.json"),
                    sym = tmp("exasim_straggler_sym.json");
  REQUIRE(run_cli("run '" + scenario + "' --json '" + slow + "'").status == 0);
  REQUIRE(run_cli("run '" + scenario + "' --set 'simulation.stragglers=[]' --json '" + even + "'").status == 0);
  REQUIRE(run_cli("run '" + scenario + "' --set 'simulation.stragglers=[]' --set simulation.all_ranks=false --json '" + sym + "'")
              .status == 0);
  const auto s = read_json(slow), e = read_json(even), y = read_json(sym);
  CHECK(e["iteration_time_s"].get<double>() == exasim::testing::approx(y["iteration_time_s"].get<double>()).epsilon(1e-12));
  CHECK(e["simulation"]["tasks"].get<double>() > 60 * y["simulation"]["tasks"].get<double>() / 2);  // 32 ranks a stage
  // A 15% slower GPU stretches its TP group, its stage and, through the gradient reduction, the job.
  CHECK(s["iteration_time_s"].get<double>() > 1.05 * e["iteration_time_s"].get<double>());
  CHECK(s["iteration_time_s"].get<double>() < 1.15 * e["iteration_time_s"].get<double>());
  // Stragglers need all_ranks: a clean error naming the key.
  const CliResult bad = run_cli("run '" + scenario + "' --set simulation.all_ranks=false");
  check_clean_error(bad);
  CHECK(contains(bad.output, "simulation.stragglers"));
}
