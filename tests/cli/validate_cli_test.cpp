// `exasim validate` on published runs: the error bounds the issues promise must hold (a regression
// guard: the bounds sit a little above today's errors).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

// Before cli_runner.hpp: <sys/wait.h> defines si_value, a parameter name in hw/units.hpp.
#include "validate/error_summary.hpp"
#include "validate/repeated_runs.hpp"
#include "validate/validation_case.hpp"
#include "cli_runner.hpp"

using namespace exasim::testing;

namespace {

// `exasim validate` over case files of validate/cases/ within a mean and a worst bound (percent).
void check_within(const std::vector<std::string>& files, const std::string& max_mape, const std::string& max_error,
                  int cases) {
  std::string args;
  for (const std::string& f : files) args += "'" + std::string(EXASIM_SOURCE_DIR) + "/validate/cases/" + f + "' ";
  const CliResult r = run_cli("validate " + args + "--max-mape " + max_mape + " --max-error " + max_error);
  INFO("output: ", r.output);
  CHECK(r.status == 0);
  CHECK(contains(r.output, std::to_string(cases) + " cases"));
}

}  // namespace

TEST_CASE("validate: Megatron SC'21 Table 1 within 6% mean, 10% worst") {
  const std::string cases = std::string(EXASIM_SOURCE_DIR) + "/validate/cases/megatron-sc21-table1.yaml";
  const CliResult r = run_cli("validate '" + cases + "' --max-mape 6 --max-error 10");
  INFO("output: ", r.output);
  CHECK(r.status == 0);
  CHECK(contains(r.output, "10 cases: mean absolute error"));
  for (const char* id : {"megatron-sc21-t1-1.7B", "megatron-sc21-t1-1008.0B"}) CHECK(contains(r.output, id));
}

TEST_CASE("validate: a bound that is too tight fails with exit 1, an id prefix selects cases") {
  const std::string cases = std::string(EXASIM_SOURCE_DIR) + "/validate/cases/megatron-sc21-table1.yaml";
  CHECK(run_cli("validate '" + cases + "' --max-error 0.0001").status == 1);
  const CliResult r = run_cli("validate megatron-sc21-t1-1.7B");
  INFO("output: ", r.output);
  CHECK(r.status == 0);
  CHECK(contains(r.output, "1 cases"));
  check_clean_error(run_cli("validate no-such-case-prefix"));
}

// The mean at Calculon's 3.65% on Megatron's runs (2.7% measured). The worst is the 22B run (one
// micro-batch on 8 GPUs, -8.1%: its optimizer step and per-iteration host work are a tenth of the
// iteration, and exasim charges Adam on 16-bit gradients, not Megatron's fp32 main gradients); it
// was -5.7% before the backward's TP collectives were overlapped as Megatron-LM overlaps them.
TEST_CASE("validate: Korthikanti et al. 2022 (sequence parallelism, selective recompute) within 3.65% mean, 9% worst") {
  check_within({"korthikanti22.yaml"}, "3.65", "9", 6);
}

TEST_CASE("validate: TensorRT-LLM offline throughput within 15% mean, 30% worst (the serving issue's bound)") {
  check_within({"serving-trtllm-llama3.1-8b.yaml", "serving-trtllm-llama3.3-70b.yaml"}, "15", "30", 60);
}

// NeMo 24.07 on H100 (GPT-3, Llama 2/3, Nemotron 8B/22B/340B, SFT and LoRA): 6.3% mean, 15.9% worst.
TEST_CASE("validate: NeMo 24.07 H100 FP8 within 8% mean, 20% worst") {
  check_within({"nemo-24.07-h100.yaml"}, "8", "20", 17);
}

// The JAX stacks of DGX Cloud 25.01 (MaxText, PaxML; ZeRO-3 over FSDP groups): 10.1% mean, 24.2% worst.
TEST_CASE("validate: DGX Cloud 25.01 MaxText and PaxML within 12% mean, 25% worst") {
  check_within({"dgxc-25.01-jax.yaml"}, "12", "25", 25);
}

// Megatron-Bridge 25.09 (precision taken as FP8: validate/cases/mbridge-25.09.yaml says why), its
// dense Llama rows on H100, B200 and GB200: 7.1% mean, 16.1% worst (B200 405B, too fast). Its MoE
// rows are in the table of the training issue's note, not bounded here: the same Qwen3-30B recipe
// ran 2x apart in 25.09 and 25.11 on the same hardware, so no bound below 90% holds for both.
TEST_CASE("validate: Megatron-Bridge 25.09 dense runs within 8% mean, 18% worst") {
  std::string args;
  for (const char* system : {"H100", "B200", "GB200"})
    args += std::string("mbridge-25.09-pre-training-DGX-") + system + "-LLAMA3 ";
  const CliResult r = run_cli("validate " + args + "--max-mape 8 --max-error 18");
  INFO("output: ", r.output);
  CHECK(r.status == 0);
  CHECK(contains(r.output, "8 cases"));
}

// Megatron-Core's H100 weak and strong scaling (README table): 8.8% mean, 18.1% worst.
TEST_CASE("validate: Megatron-Core H100 scaling within 10% mean, 20% worst") {
  check_within({"mcore-h100-weak.yaml"}, "10", "20", 11);
}

// The training issue's bound over every training run expressed (all case files but the serving
// ones): 9.57% mean over 132 runs. The worst runs are listed in the README and not bounded here.
TEST_CASE("validate: every expressed training run within 10% mean absolute error") {
  check_within({"dgxc-25.01-jax.yaml", "dgxc-25.01-nemo-gpt3.yaml", "korthikanti22.yaml", "llama1-65b.yaml",
                "mbridge-25.09.yaml", "mbridge-25.11-blackwell.yaml", "mbridge-25.11-gb200.yaml",
                "mbridge-25.11-gptoss.yaml", "mbridge-25.11-h100.yaml", "mcore-h100-weak.yaml",
                "megatron-readme-gpt3.yaml", "megatron-sc21-table1.yaml", "megatron-sc21-table2.yaml",
                "megatron-v1.yaml", "mtnlg-530b.yaml", "nemo-24.07-h100.yaml"},
               "10", "100", 132);
}

// The training issue's bound on Megatron-LM SC'21 (Tables 1 and 2, 22 runs): 4.62% mean today.
TEST_CASE("validate: Megatron-LM SC'21 Tables 1 and 2 within 5% mean") {
  check_within({"megatron-sc21-table1.yaml", "megatron-sc21-table2.yaml"}, "5", "13", 22);
}

// The issue asks for each case's choices where its source is silent: every case file states
// them (as `choices:`), and `exasim validate` reports them with the results.
TEST_CASE("validate: every case states its choices, and --choices and --json report them") {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& e : fs::directory_iterator(std::string(EXASIM_SOURCE_DIR) + "/validate/cases")) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    for (const auto& c : exasim::validate::load_cases(e.path().string())) {
      INFO(c.id);
      CHECK(c.shared_choices > 0);
      CHECK(c.choices.size() >= c.shared_choices);
    }
  }
  CHECK(files >= 18);
  const std::string json = (fs::temp_directory_path() / "exasim_validate_choices.json").string();
  const CliResult r = run_cli("validate megatron-v1 --choices --json '" + json + "'");
  INFO("output: ", r.output);
  CHECK(r.status == 0);
  CHECK(contains(r.output, "Choices where the sources are silent:"));
  CHECK(contains(r.output, "megatron-v1.yaml (2 cases)"));
  CHECK(contains(r.output, "  - DGX-2H: V100 SXM3 32 GB"));
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(contains(text, "\"choices\": ["));
  CHECK(contains(text, "activation checkpointing after every layer"));
  fs::remove(json);
}

TEST_CASE("validate: a case file's choices must be a list") {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / "exasim_bad_choices.yaml";
  std::ofstream(file) << "source: test\nchoices: micro_batch 1\ncases: []\n";
  const CliResult r = run_cli("validate '" + file.string() + "'");
  check_clean_error(r);
  CHECK(contains(r.output, "choices"));
  fs::remove(file);
}

// Two entries of one run measured apart: the floor no prediction can beat is fixed by the
// measurements, (longest - shortest) / (longest + shortest); key order does not make runs differ.
TEST_CASE("validate: the same run measured twice reports the error floor of the pair") {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / "exasim_repeated_runs.yaml";
  std::ofstream(file) << R"(source: test
choices: ["the default scenario's plan"]
defaults:
  cluster: {gpu: A100-SXM4-80GB, gpus_per_node: 8, nodes: 1, intra_node: nvswitch-a100}
  model: {layers: 4, hidden: 1024, heads: 16, ffn: 4096, vocab: 32000}
cases:
  - id: run-a
    scenario: {training: {seq_len: 1024, global_batch: 8, micro_batch: 1, parallelism: {tp: 1, pp: 1, dp: 8}}}
    measured: {iteration_time_s: 1.0}
  - id: run-b
    scenario: {training: {parallelism: {dp: 8, pp: 1, tp: 1}, micro_batch: 1, global_batch: 8, seq_len: 1024}}
    measured: {iteration_time_s: 2.0}
  - id: run-c
    scenario: {training: {seq_len: 1024, global_batch: 16, micro_batch: 1, parallelism: {tp: 1, pp: 1, dp: 8}}}
    measured: {iteration_time_s: 3.0}
)";
  const auto cases = exasim::validate::load_cases(file.string());
  REQUIRE(cases.size() == 3);
  CHECK(exasim::validate::canonical_scenario(cases[0]) == exasim::validate::canonical_scenario(cases[1]));
  CHECK(exasim::validate::canonical_scenario(cases[0]) != exasim::validate::canonical_scenario(cases[2]));
  std::vector<exasim::validate::CaseResult> results(3);
  for (int i = 0; i < 3; ++i) results[i].measured_iteration_s = cases[i].measured["iteration_time_s"].as_number();
  const auto groups = exasim::validate::repeated_runs(cases, results);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].cases == std::vector<std::size_t>{0, 1});
  CHECK(std::abs(groups[0].least_worst_error() - 1.0 / 3) < 1e-12);
  results[1].measured_iteration_s = 1.005;  // within the 1% tolerance: not reported
  CHECK(exasim::validate::repeated_runs(cases, results).empty());
  const CliResult r = run_cli("validate '" + file.string() + "'");
  INFO("output: ", r.output);
  CHECK(r.status == 0);
  CHECK(contains(r.output, "floor 33.3%:  run-a (1.000 s)  run-b (2.000 s)"));
  CHECK(contains(r.output, "worst error no model can avoid: 33.3%"));
  fs::remove(file);
}

TEST_CASE("validate: errors summed up per case file and per kind, by hand") {
  using exasim::validate::CaseResult;
  using exasim::validate::ValidationCase;
  std::vector<ValidationCase> cases(4);
  std::vector<CaseResult> results(4);
  const char* files[] = {"/x/a.yaml", "/x/a.yaml", "/y/b.yaml", "/x/a.yaml"};  // then /z/a.yaml below
  const char* kinds[] = {"training", "training", "serving", "training"};
  const double errors[] = {0.10, -0.30, 0.05, 0.02};
  for (int i = 0; i < 4; ++i) {
    cases[i].file = files[i];
    cases[i].source = std::string("source of ") + files[i];
    results[i].kind = kinds[i];
    results[i].error = errors[i];
  }
  const auto s = exasim::validate::summarize(cases, results);
  REQUIRE(s.by_file.size() == 2);
  CHECK(s.by_file[0].label == "a.yaml");
  CHECK(s.by_file[0].source == "source of /x/a.yaml");
  CHECK(s.by_file[0].cases == 3);
  CHECK(std::abs(s.by_file[0].mean_abs - 0.42 / 3) < 1e-12);
  CHECK(s.by_file[0].worst_abs == 0.30);
  CHECK(s.by_file[1].label == "b.yaml");
  CHECK(s.by_file[1].mean_abs == 0.05);
  REQUIRE(s.by_kind.size() == 2);
  CHECK(s.by_kind[0].label == "training");
  CHECK(s.by_kind[0].cases == 3);
  CHECK(s.by_kind[1].label == "serving");
  CHECK(s.all.cases == 4);
  CHECK(std::abs(s.all.mean_abs - 0.47 / 4) < 1e-12);
  CHECK(s.all.worst_abs == 0.30);
  // Two case files of one name are kept apart, each named by its path.
  cases[3].file = "/z/a.yaml";
  const auto apart = exasim::validate::summarize(cases, results);
  REQUIRE(apart.by_file.size() == 3);
  CHECK(apart.by_file[0].label == "/x/a.yaml");
  CHECK(apart.by_file[0].cases == 2);
  CHECK(apart.by_file[2].label == "/z/a.yaml");
  CHECK(apart.by_file[2].cases == 1);
  results.pop_back();
  CHECK_THROWS(exasim::validate::summarize(cases, results));
}

// The training issue's bound is over its training runs alone: `exasim validate` prints that mean
// apart from the serving runs', and each case file's, in the table and in the JSON.
TEST_CASE("validate: the summary names each case file and each kind, in the table and the JSON") {
  namespace fs = std::filesystem;
  const std::string dir = std::string(EXASIM_SOURCE_DIR) + "/validate/cases/";
  const fs::path json = fs::temp_directory_path() / "exasim_validate_summary.json";
  const CliResult r = run_cli("validate '" + dir + "korthikanti22.yaml' '" + dir + "llama1-65b.yaml' '" + dir +
                              "serving-trtllm-llama3.1-8b.yaml' --json '" + json.string() + "'");
  INFO("output: ", r.output);
  CHECK(r.status == 0);
  CHECK(contains(r.output, "case file"));
  CHECK(contains(r.output, "korthikanti22.yaml"));
  CHECK(contains(r.output, "training: 7 cases, mean absolute error"));
  CHECK(contains(r.output, "serving: 20 cases, mean absolute error"));
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(contains(text, "\"by_file\""));
  CHECK(contains(text, "\"by_kind\""));
  CHECK(contains(text, "\"label\": \"serving\""));
}
