// `exasim run` with a reliability: section: the goodput JSON DESIGN.md promises, its numbers
// against the closed form, and the refusals with file, key and fix.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "approx.hpp"
#include "cli_runner.hpp"
#include "models/reliability/checkpoint_interval.hpp"

using namespace exasim::testing;

namespace {

const std::string kScenario = std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/gpt3-175b-a100-1024.yaml";
const std::string kServing = std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/llama2-70b-h100-serving.yaml";

std::string with_reliability(const std::string& section) { return "run '" + kScenario + "' --set 'reliability=" + section + "'"; }

// `exasim run` of `args` (a scenario and its overrides) with --json: the summary printed and the JSON.
struct Run {
  std::string output;
  nlohmann::json json;
};
Run run_json(const std::string& args, const std::string& name) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  const CliResult r = run_cli(args + " --json '" + path + "'");
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  std::ifstream in(path);
  return {r.output, nlohmann::json::parse(in)};
}

}  // namespace

TEST_CASE("reliability cli: goodput in the summary and the JSON, as the closed form says") {
  const Run r = run_json(with_reliability("{job_mtbf: 3 h, checkpoint: {interval: optimal, write_time: 30 s}, "
                                           "restart_time: 15 min, horizon: 20 d, trials: 40}"),
                         "exasim_reliability_test.json");
  CHECK(contains(r.output, "useful fraction of wall time"));
  const auto& j = r.json;
  const auto& g = j.at("goodput");
  const double iteration = j.at("iteration_time_s");
  const exasim::models::CheckpointedJob job{3 * 3600.0, 30, 900};
  // The optimum is the closed form's; the interval used is the nearest whole number of iterations.
  CHECK(double(g.at("optimal_checkpoint_interval_s")) == approx(exasim::models::optimal_interval(job)).epsilon(1e-9));
  const double interval = g.at("checkpoint_interval_s");
  CHECK(std::abs(interval - double(g.at("optimal_checkpoint_interval_s"))) <= iteration / 2);
  CHECK(double(g.at("expected_fraction")) == approx(exasim::models::expected_goodput(job, interval)).epsilon(1e-9));
  CHECK(double(g.at("fraction")) == approx(double(g.at("expected_fraction"))).epsilon(0.02));
  CHECK(double(g.at("fraction_ci95")[0]) < double(g.at("fraction")));
  CHECK(double(g.at("interruptions_per_day")) == approx(8).epsilon(0.1));  // 24 h / 3 h
  CHECK(double(g.at("horizon_s")) == 20 * 86400.0);
  const auto& b = g.at("time_breakdown_s");
  CHECK(double(b.at("useful")) + double(b.at("checkpoint")) + double(b.at("lost_work")) + double(b.at("restart")) ==
        approx(20 * 86400.0).epsilon(1e-12));
  CHECK_FALSE(g.contains("time_to_train_s"));
}

TEST_CASE("reliability cli: a token budget gives the time to train it") {
  const Run r = run_json(with_reliability("{job_mtbf: 3 h, checkpoint: {interval: 1 h, write_time: 30 s}, "
                                           "restart_time: 15 min, tokens: 300e9, trials: 20}"),
                         "exasim_reliability_tokens.json");
  CHECK(contains(r.output, "time to train 300.0 B tokens"));
  const auto& j = r.json;
  const auto& g = j.at("goodput");
  const double clean = 300e9 / double(j.at("tokens_per_s"));  // the failure-free time, to an iteration
  CHECK(double(g.at("time_to_train_s")) > clean);
  CHECK(double(g.at("time_to_train_s")) == approx(clean / double(g.at("expected_fraction"))).epsilon(0.03));
}

TEST_CASE("reliability cli: implausible sections are refused with their key") {
  struct Bad {
    std::string section;
    const char* message;
  };
  for (const Bad& b : {Bad{"{job_mtbf: 10 s, checkpoint: {write_time: 30 s}, restart_time: 1 min}", "reliability.job_mtbf"},
                       Bad{"{job_mtbf: 3 h, checkpoint: {write_time: 30 s}}", "restart_time"},
                       Bad{"{job_mtbf: 3 h, checkpoint: {write_time: -1 s}, restart_time: 1 min}", "write_time"},
                       Bad{"{job_mtbf: 3 h, checkpoint: {write_time: 1 s}, restart_time: 1 min, horizon: 2 d, tokens: 1e12}",
                           "give horizon or tokens"},
                       Bad{"{job_mtbf: 3 h, checkpoint: {write_time: 1 s}, restart_time: 1 min, trials: 1}", "confidence"},
                       Bad{"{job_mtbf: 3 h, checkpoint: {write_time: 1 s, every: 2 h}, restart_time: 1 min}", "every"},
                       Bad{"{job_mtbf: 2 min, checkpoint: {write_time: 20 min, interval: 1 h}, restart_time: 10 min}",
                           "almost no progress"}}) {
    CAPTURE(b.section);
    const CliResult r = run_cli(with_reliability(b.section));
    check_clean_error(r);
    CHECK(contains(r.output, b.message));
  }
  const CliResult serving = run_cli("run '" + kServing + "' --set 'reliability={job_mtbf: 3 h}'");
  check_clean_error(serving);
  CHECK(contains(serving.output, "training jobs"));
}

TEST_CASE("reliability cli: Llama 3.1 405B on 16,384 H100 is interrupted as often as Llama 3's paper says") {
  const Run r = run_json("run '" + std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/llama3.1-405b-h100-16k.yaml'",
                         "exasim_reliability_405b.json");
  const auto& g = r.json.at("goodput");
  // 419 unexpected interruptions in the paper's 54 days (Llama 3, Table 5), simulated over 54 days.
  CHECK(double(g.at("interruptions_per_day")) == approx(419.0 / 54).epsilon(0.02));
  // The checkpoint: 14 bytes for each of 405.9 B parameters, at Tectonic's 2 TB/s.
  CHECK(double(g.at("checkpoint_write_s")) == approx(14 * 405.9e9 / 2e12).epsilon(0.01));
  CHECK(double(g.at("fraction")) == approx(double(g.at("expected_fraction"))).epsilon(0.01));
}

TEST_CASE("reliability cli: plan reports each simulated plan's goodput and time to train") {
  const std::string path = (std::filesystem::temp_directory_path() / "exasim_reliability_plan.json").string();
  const CliResult r = run_cli("plan '" + kScenario + "' --top 2 --objective time-to-train --set 'reliability={job_mtbf: 3 h, " +
                              "checkpoint: {interval: optimal, write_time: 30 s}, restart_time: 15 min, tokens: 300e9, trials: 20}' --json '" +
                              path + "'");
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "to train"));
  std::ifstream in(path);
  const auto plans = nlohmann::json::parse(in).at("plans");
  REQUIRE(plans.size() >= 2);
  for (const auto& p : plans) {
    // The ranking's expectation, and the plan's own Monte Carlo beside it.
    const double expected = p.at("time_to_train_s"), simulated = p.at("goodput").at("time_to_train_s");
    CHECK(simulated == approx(expected).epsilon(0.03));
  }
  CHECK(double(plans[0].at("time_to_train_s")) <= double(plans[1].at("time_to_train_s")));
}
