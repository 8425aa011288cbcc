// `exasim run` on serving scenarios (summary, --json keys of DESIGN.md, --requests CSV) and
// `exasim plan` on serving scenarios (capacity search).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <sstream>

#include "cli_runner.hpp"

using namespace exasim::testing;

namespace {

std::string tmp(const std::string& name) { return (std::filesystem::temp_directory_path() / name).string(); }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kScenarios = std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/";
const std::string kAzure = kScenarios + "llama2-70b-h100-serving.yaml";
const std::string kPd = kScenarios + "llama3.1-70b-h100-pd-serving.yaml";
// The scenarios replay the Azure trace from shared/data beside the repository; the tests replay its
// first 300 requests, copied into tests/data, so that they run wherever the clone sits.
const std::string kAzureHead =
    " --set serving.workload.trace=" + std::string(EXASIM_SOURCE_DIR) + "/tests/data/traces/azure_conv_head.csv";

// A small serving scenario written next to the test's temp files.
std::string small_scenario(const std::string& name, const std::string& serving_extra) {
  const std::string path = tmp(name);
  std::ofstream(path) << "name: small\ncluster: {gpu: H100-SXM5-80GB, gpus_per_node: 8, nodes: 1}\nmodel: llama3.1-8b\n"
                         "serving:\n  replicas: 2\n  slo: {ttft: 500 ms, tpot: 50 ms}\n"
                         "  workload: {arrival: poisson, rate_per_s: 20, requests: 300, prompt_tokens: 400, output_tokens: 60}\n"
                      << serving_extra;
  return path;
}

}  // namespace

TEST_CASE("serving run: the Azure trace scenario prints latencies and writes DESIGN.md's JSON keys and a CSV") {
  const std::string json = tmp("exasim_serving_run.json"), csv = tmp("exasim_serving_run.csv");
  const CliResult r = run_cli("run '" + kAzure + "'" + kAzureHead + " --json '" + json +
                              "' --requests '" + csv + "'");
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  for (const char* part : {"TTFT", "TPOT", "ITL", "E2E", "queueing delay", "SLO", "goodput", "KV utilization", "preemptions"})
    CHECK(contains(r.output, part));
  const auto j = nlohmann::json::parse(read_file(json));
  CHECK(j.at("kind") == "serving");
  for (const char* key : {"throughput_tokens_per_s", "requests_per_s", "slo_attainment", "goodput_requests_per_s",
                          "input_tokens_per_s"}) {
    CAPTURE(key);
    CHECK(j.at(key).is_number());
  }
  for (const char* key : {"ttft_s", "tpot_s", "itl_s", "e2e_s", "queueing_delay_s"})
    for (const char* stat : {"mean", "p50", "p90", "p99"}) {
      CAPTURE(key);
      CAPTURE(stat);
      CHECK(j.at(key).at(stat).is_number());
    }
  CHECK(j.at("kv_cache").at("peak_utilization").is_number());
  CHECK(j.at("power").at("avg_w").is_number());
  CHECK(j.at("energy").at("per_token_j").is_number());
  CHECK(j.at("cost").at("usd_per_million_tokens").is_number());
  const double p50 = j["ttft_s"]["p50"], p90 = j["ttft_s"]["p90"], p99 = j["ttft_s"]["p99"];
  CHECK(p50 <= p90);
  CHECK(p90 <= p99);
  // One CSV line per completed request, plus the header.
  const std::string text = read_file(csv);
  const auto lines = std::count(text.begin(), text.end(), '\n');
  CHECK(lines == 1 + j.at("requests_completed").get<long>());
  CHECK(text.starts_with("id,arrival_s,prompt_tokens,output_tokens,replica"));
}

TEST_CASE("serving run: same scenario and seed give the same numbers bit for bit") {
  const std::string s = small_scenario("exasim_serving_det.yaml", "  router: random\n");
  const std::string a = tmp("exasim_det_a.json"), b = tmp("exasim_det_b.json");
  REQUIRE(run_cli("run '" + s + "' --json '" + a + "'").status == 0);
  REQUIRE(run_cli("run '" + s + "' --json '" + b + "'").status == 0);
  CHECK(read_file(a) == read_file(b));
}

TEST_CASE("serving run: bad serving input is a one-line error naming file, line and key") {
  const std::string s = small_scenario("exasim_serving_bad.yaml", "  scheduler: fifo\n");
  const CliResult r = run_cli("run '" + s + "'");
  check_clean_error(r);
  CHECK(contains(r.output, "exasim_serving_bad.yaml:"));
  CHECK(contains(r.output, "serving.scheduler"));
  CHECK(contains(r.output, "vllm | sarathi | orca"));
}

TEST_CASE("serving plan: highest rate within the SLO for the scenario's deployment") {
  const std::string s = small_scenario("exasim_serving_plan.yaml", "");
  const std::string json = tmp("exasim_serving_plan.json");
  const CliResult r = run_cli("plan '" + s + "' --no-shapes --json '" + json + "'");
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "max rate"));
  const auto j = nlohmann::json::parse(read_file(json));
  REQUIRE(j.at("shapes").size() == 1);
  const auto& shape = j["shapes"][0];
  const double rate = shape.at("max_rate_per_s");
  CHECK(rate > 0);
  // The answer is bracketed: a probe at or below it met the SLO and one above it within 2% did not.
  bool above_fails = false;
  for (const auto& p : shape.at("probes")) {
    const double x = p.at("rate_per_s");
    if (x > rate * 1.0000001) above_fails = above_fails || (!p.at("meets").get<bool>() && x <= rate * 1.0200001);
    if (x <= rate * 1.0000001 && x >= rate * 0.9999999) CHECK(p.at("meets").get<bool>());
  }
  CHECK(above_fails);
}

TEST_CASE("serving plan: a training objective on a serving scenario is a clean error") {
  const std::string s = small_scenario("exasim_serving_plan_obj.yaml", "");
  const CliResult r = run_cli("plan '" + s + "' --objective cost_per_token");
  check_clean_error(r);
  CHECK(contains(r.output, "--objective"));
}

TEST_CASE("serving run: the P/D scenario moves KV between pools") {
  const std::string json = tmp("exasim_serving_pd.json");
  const CliResult r = run_cli("run '" + kPd + "'" + kAzureHead + " --json '" + json + "'");
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "KV moved prefill -> decode"));
  const auto j = nlohmann::json::parse(read_file(json));
  CHECK(j.at("kv_transfer_bytes").get<double>() > 0);
  CHECK(j.at("serving").at("pools").size() == 2);
}

TEST_CASE("serving run: a copied scenario finds its trace in the data folder") {
  // Issue 28: a copy of the serving scenario failed on its ../../../shared/data path. A relative
  // path is read beside the scenario, then under $EXASIM_DATA (default ../shared/data); here the
  // data folder is tests/data, which holds the trace's first 300 requests.
  const std::string copy = tmp("exasim_copied_serving.yaml");
  std::ofstream(copy) << "name: copied\ncluster: {gpu: H100-SXM5-80GB, gpus_per_node: 8, nodes: 1}\nmodel: llama3.1-8b\n"
                         "serving:\n  replicas: 2\n  slo: {ttft: 500 ms, tpot: 50 ms}\n"
                         "  workload: {trace: traces/azure_conv_head.csv, max_requests: 50}\n";
  ::setenv("EXASIM_DATA", (std::string(EXASIM_SOURCE_DIR) + "/tests/data").c_str(), 1);
  const CliResult found = run_cli("run '" + copy + "'");
  ::setenv("EXASIM_DATA", (std::string(EXASIM_SOURCE_DIR) + "/tests/data/hf").c_str(), 1);
  const CliResult missing = run_cli("run '" + copy + "'");
  ::unsetenv("EXASIM_DATA");
  INFO("output: ", found.output);
  CHECK(found.status == 0);
  CHECK(contains(found.output, "TTFT"));
  check_clean_error(missing);
  CHECK(contains(missing.output, "no file \"traces/azure_conv_head.csv\" beside the scenario"));
  CHECK(contains(missing.output, "$EXASIM_DATA"));
}
