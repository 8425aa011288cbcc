// `exasim plan` on a training scenario: the ranked table, the explanation, and the JSON file
// ({"plans": [...]} best first, each with its training settings and `exasim run`'s metrics).
#include <doctest/doctest.h>

#include "approx.hpp"
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../planner/planner_fixture.hpp"
#include "cli_runner.hpp"

using exasim::testing::contains;
using exasim::testing::run_cli;

namespace {

namespace fs = std::filesystem;

fs::path scenario(const std::string& extra = "") {
  const fs::path dir = fs::temp_directory_path() / ("exasim-plan-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "small.yaml") << exasim::testing::small_gpt_yaml(extra);
  return dir;
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("plan: ranked plans, best first, with run's keys and the explanation") {
  const fs::path dir = scenario();
  const auto r = run_cli("plan " + (dir / "small.yaml").string() + " --top 5 --json " + (dir / "p.json").string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "candidates"));
  CHECK(contains(r.output, "Why #1 beats #2"));
  CHECK(contains(r.output, "scenario's plan"));
  const auto j = read_json(dir / "p.json");
  CHECK(j["kind"] == "training-plan");
  CHECK(j["objective"] == "throughput");
  const auto& plans = j["plans"];
  REQUIRE(plans.size() >= 5);
  double last = 1e300;
  for (const auto& p : plans) {
    for (const char* key : {"iteration_time_s", "tokens_per_s", "samples_per_s", "tflops_per_gpu", "mfu", "hfu", "memory",
                            "time_breakdown_s", "power", "energy", "cost", "training", "rank", "estimate"})
      CHECK(p.contains(key));
    for (const char* key : {"parallelism", "pipeline_schedule", "micro_batch", "zero", "recompute", "offload"}) CHECK(p["training"].contains(key));
    const double tps = p["tokens_per_s"].get<double>();
    CHECK(tps <= last);  // best first
    last = tps;
    CHECK(p["memory"]["peak_per_gpu_bytes"].get<double>() <= p["memory"]["capacity_per_gpu_bytes"].get<double>());
  }
  CHECK(plans[0]["rank"] == 1);
  fs::remove_all(dir);
}

TEST_CASE("plan: other objectives and the Pareto frontier") {
  const fs::path dir = scenario();
  for (const char* objective : {"cost_per_token", "energy_per_token", "iteration_time"}) {
    const auto r = run_cli("plan " + (dir / "small.yaml").string() + " --top 3 --objective " + objective + " --json " + (dir / "o.json").string());
    INFO(objective, r.output);
    REQUIRE(r.status == 0);
    const auto j = read_json(dir / "o.json");
    CHECK(j["objective"] == objective);
    if (std::string(objective) == "iteration_time") CHECK(j["memory_margin"] == exasim::testing::approx(0.1));
  }
  const auto r = run_cli("plan " + (dir / "small.yaml").string() + " --top 6 --objective pareto_energy --json " + (dir / "f.json").string());
  REQUIRE(r.status == 0);
  const auto plans = read_json(dir / "f.json")["plans"];
  // Frontier plans first; none of them is beaten on both throughput and energy by any plan.
  for (const auto& a : plans) {
    if (!a["pareto"].get<bool>()) continue;
    for (const auto& b : plans) {
      const bool dominates = b["tokens_per_s"].get<double>() > a["tokens_per_s"].get<double>() &&
                             b["energy"]["per_token_j"].get<double>() < a["energy"]["per_token_j"].get<double>();
      CHECK_FALSE(dominates);
    }
  }
  CHECK(plans[0]["pareto"] == true);
  fs::remove_all(dir);
}

TEST_CASE("plan: bad objectives and impossible spaces are one-line errors") {
  const fs::path dir = scenario();
  exasim::testing::check_clean_error(run_cli("plan " + (dir / "small.yaml").string() + " --objective fastest"));
  const fs::path dir2 = scenario("plan_space: {tp: [3]}\n");
  const auto r = run_cli("plan " + (dir2 / "small.yaml").string() + " --top 2");
  INFO(r.output);
  // tp 3 divides nothing here: only the scenario's own plan can run, and it is reported.
  CHECK(r.status == 0);
  CHECK(contains(r.output, "plan_space admits no plan here"));
  const fs::path dir3 = scenario("plan_space: {offload: disk}\n");  // not an offload mode
  exasim::testing::check_clean_error(run_cli("plan " + (dir3 / "small.yaml").string()));
  fs::remove_all(dir);
}

TEST_CASE("plan: context parallelism is searched where plan_space asks for it") {
  const fs::path dir = scenario("plan_space: {cp: [1, 2]}\n");
  const auto r = run_cli("plan " + (dir / "small.yaml").string() + " --top 3");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(contains(r.output, " cp 2 "));
  fs::remove_all(dir);
}

TEST_CASE("plan: the power-capped what-if when the scenario gives a facility budget") {
  const fs::path dir = scenario("power: {facility_budget: 200 kW, whatif_caps: [350 W, 250 W]}\n");
  const auto r = run_cli("plan " + (dir / "small.yaml").string() + " --top 2 --json " + (dir / "w.json").string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "Power-capped what-if"));
  const auto w = read_json(dir / "w.json")["power_whatif"];
  REQUIRE(w["caps"].size() == 3);  // TDP, 350 W, 250 W
  CHECK(w["caps"][0]["capped"] == false);
  // Lower caps: more servers fit the budget, each slower.
  CHECK(w["caps"][2]["servers"].get<int>() > w["caps"][0]["servers"].get<int>());
  CHECK(w["caps"][2]["tokens_per_s"].get<double>() <= w["caps"][0]["tokens_per_s"].get<double>());
  CHECK(w["caps"][2]["peak_gpu_w"].get<double>() <= 250);
  fs::remove_all(dir);
}

TEST_CASE("plan: a mixture-of-experts model is searched over expert parallelism too") {
  const fs::path dir = fs::temp_directory_path() / ("exasim-plan-moe-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "moe.yaml") << "cluster: {node: dgx-h100, nodes: 4}\nmodel: mixtral-8x7b\n"
                                     "training: {seq_len: 4096, global_batch: 32, zero: 1, recompute: selective,\n"
                                     "           parallelism: {tp: 1, ep: 8, dp: 32}}\n";
  const auto r = run_cli("plan '" + (dir / "moe.yaml").string() + "' --top 3");
  INFO("output: ", r.output);
  CHECK(r.status == 0);
  CHECK(contains(r.output, "scenario's plan"));
  CHECK(contains(r.output, "1  tp "));
  CHECK(contains(r.output, " ep 8 "));
  fs::remove_all(dir);
}
