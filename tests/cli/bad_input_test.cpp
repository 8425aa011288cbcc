// Ten kinds of bad input each give one line "exasim: error: <file>:<line>: <key>: ..." and a
// non-zero exit; never a crash or a stack trace.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>

#include "cli_runner.hpp"

using namespace exasim::testing;

namespace {

const char* kGood = R"(name: bad-input-base
cluster:
  gpu: A100-SXM4-80GB
  gpus_per_node: 8
  nodes: 2
  inter_node: {nic: ib-hdr-200, nics_per_node: 8}
model: gpt-1.7b
training:
  seq_len: 2048
  global_batch: 64
  micro_batch: 1
  precision: bf16
  parallelism: {tp: 2, pp: 2, dp: 4}
)";

// Writes `text` into a fresh scenario file and returns its path.
std::string scenario(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "exasim_bad_input";
  std::filesystem::create_directories(dir);
  const auto path = dir / (name + ".yaml");
  std::ofstream(path) << text;
  return path.string();
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// Runs `exasim run` on the file and checks the one-line error names file, line and key.
void expect_error(const std::string& name, const std::string& text, const std::string& location,
                  const std::string& phrase) {
  const std::string path = scenario(name, text);
  const CliResult r = run_cli("run '" + path + "'");
  check_clean_error(r);
  INFO("output: ", r.output);
  CHECK(contains(r.output, location));
  CHECK(contains(r.output, phrase));
}

// Runs an exasim command line and checks it fails cleanly with every one of `phrases` in its output.
void expect_command_error(const std::string& command, std::initializer_list<std::string> phrases) {
  const CliResult r = run_cli(command);
  check_clean_error(r);
  INFO("output: ", r.output);
  for (const std::string& p : phrases) CHECK(contains(r.output, p));
}

}  // namespace

TEST_CASE("the base scenario runs") {
  const CliResult r = run_cli("run '" + scenario("good", kGood) + "'");
  INFO("output: ", r.output);
  CHECK(r.status == 0);
}

TEST_CASE("bad input 1: YAML syntax error") {
  expect_error("syntax", replace(kGood, "micro_batch: 1", "micro_batch: [1"), "syntax.yaml:", "YAML syntax error");
}

TEST_CASE("bad input 2: unknown key with a did-you-mean hint") {
  expect_error("unknown", replace(kGood, "micro_batch: 1", "micro_bach: 1"), "unknown.yaml:11: training.micro_bach",
               "did you mean \"micro_batch\"");
}

TEST_CASE("bad input 3: wrong type") {
  expect_error("type", replace(kGood, "global_batch: 64", "global_batch: lots"), "type.yaml:10: training.global_batch",
               "expected a number");
}

TEST_CASE("bad input 4: zero and negative sizes") {
  expect_error("zero", replace(kGood, "nodes: 2", "nodes: 0"), "zero.yaml:5: cluster.nodes", "at least 1");
  expect_error("negative", replace(kGood, "seq_len: 2048", "seq_len: -2048"), "negative.yaml:9: training.seq_len",
               "at least 1");
}

TEST_CASE("bad input 5: TP that does not divide the heads") {
  expect_error("tp", replace(kGood, "{tp: 2, pp: 2, dp: 4}", "{tp: 5, pp: 1, dp: 3}"),
               "tp.yaml:13: training.parallelism.tp", "does not divide the 24 attention heads");
}

TEST_CASE("bad input 6: GPU count that is not TP*PP*DP*CP") {
  expect_error("count", replace(kGood, "{tp: 2, pp: 2, dp: 4}", "{tp: 2, pp: 2, dp: 2}"),
               "count.yaml:13: training.parallelism", "but the cluster has 16");
}

TEST_CASE("bad input 7: unknown catalog name") {
  expect_error("catalog", replace(kGood, "gpu: A100-SXM4-80GB", "gpu: A100-SXM4-80G"), "catalog.yaml:3: cluster.gpu",
               "did you mean \"A100-SXM4-80GB\"");
  // A family's short name lists the family (issue 28: H100 suggested B200).
  expect_command_error("run '" + scenario("good", kGood) + "' --set cluster.gpu=H100",
                       {"--set cluster.gpu", "unknown GPU \"H100\"", "did you mean \"H100-PCIe-80GB\" or \"H100-SXM5-80GB\"?"});
}

TEST_CASE("bad input 8: missing file") {
  expect_command_error("run /nonexistent/scenario.yaml", {"/nonexistent/scenario.yaml", "cannot open"});
}

TEST_CASE("bad input 8b: a folder given as the scenario") {
  expect_command_error("run '" + std::filesystem::temp_directory_path().string() + "'", {"is a directory"});
}

TEST_CASE("bad input 8c: a negative collective size says why") {
  expect_command_error("collective --cluster dgx-a100 --op all_reduce --bytes -5 --ranks 8", {"--bytes", "cannot be negative"});
}

TEST_CASE("bad input 8d: counts far beyond what can be simulated are refused at once, naming the key") {
  // 1e12 used to wrap around in an int (an internal error); 1e9 nodes built a topology for minutes.
  expect_error("huge-batch", replace(kGood, "global_batch: 64", "global_batch: 1e12"), "huge-batch.yaml:10: training.global_batch",
               "at most 2147483647");
  expect_error("many-steps", replace(kGood, "global_batch: 64", "global_batch: 1000000000"), "training.global_batch",
               "more than the engine numbers");
  expect_error("huge-cluster", replace(kGood, "nodes: 2", "nodes: 1e9"), "huge-cluster.yaml:5: cluster.nodes",
               "1048576 devices");
}

TEST_CASE("bad input 8e: a training precision the GPU has no matrix units for") {
  // fp8 GEMMs need Hopper or later; the 16-bit fallback of the kernel models must not hide that.
  expect_error("fp8-a100", replace(kGood, "precision: bf16", "precision: fp8"), "fp8-a100.yaml:12: training.precision",
               "A100-SXM4-80GB has no fp8 matrix units");
}

TEST_CASE("bad input 9: a unit that does not parse") {
  expect_error("unit", replace(kGood, "inter_node: {nic: ib-hdr-200, nics_per_node: 8}",
                               "inter_node: {nic: {base: ib-hdr-200, bandwidth: 200 parsecs}, nics_per_node: 8}"),
               "unit.yaml:6: cluster.inter_node.nic.bandwidth", "200 parsecs");
}

TEST_CASE("bad input 10: a plan that does not fit in memory") {
  std::string big = replace(kGood, "model: gpt-1.7b", "model: gpt-39.1b");
  big = replace(big, "{tp: 2, pp: 2, dp: 4}", "{tp: 1, pp: 1, dp: 16}");
  expect_error("memory", big, "memory.yaml:8: training", "does not fit: needs");
}

TEST_CASE("bad --set overrides name the override") {
  const std::string path = scenario("good", kGood);
  CliResult r = run_cli("run '" + path + "' --set training.parallelism.tp=5");
  check_clean_error(r);
  CHECK(contains(r.output, "--set training.parallelism.tp"));
  r = run_cli("run '" + path + "' --set training.micro_batch");
  check_clean_error(r);
  CHECK(contains(r.output, "key.path=value"));
}

TEST_CASE("--set model.hf_config on a catalog model replaces it, as the YAML form does") {
  // Issue 28: it gave `model.base: unknown key "base"` with no line (the override wraps the
  // catalog name as {base: NAME, hf_config: P}).
  const std::string hf = std::string(EXASIM_SOURCE_DIR) + "/tests/data/hf/Llama-3.1-8B";
  const CliResult r = run_cli("run '" + scenario("good", kGood) + "' --set model.hf_config=" + hf);
  INFO("output: ", r.output);
  CHECK(r.status == 0);
  CHECK(contains(r.output, "Llama-3.1-8B on 16 x"));
  // Written in a file, a base beside hf_config is a contradiction, refused at its line.
  expect_error("hf_base", replace(kGood, "model: gpt-1.7b", "model: {base: gpt-1.7b, hf_config: " + hf + "}"), "hf_base.yaml:7: model.base",
               "hf_config names the whole model");
}

TEST_CASE("bad input 8f: a bare number far outside what a real part has names the unit that was meant") {
  // Issue 28's first friction: an HBM bandwidth of 4000 ran (as 4 kB/s) and reported an iteration
  // of 1.72e9 s. A bare number is SI; the range of real GPUs says which unit was left out.
  const std::string path = scenario("good", kGood);
  expect_command_error("run '" + path + "' --set cluster.gpu.hbm_bandwidth=4000",
                       {"--set cluster.gpu.hbm_bandwidth", "4000 reads as 4 kB/s", "write the unit: 4000 GB/s"});
  expect_command_error("run '" + path + "' --set 'cluster.gpu.tdp=10 MW'", {"10 MW reads as 10 MW", "outside what a real GPU has"});
  expect_error("link", replace(kGood, "nodes: 2", "nodes: 2\n  intra_node: {base: nvswitch-a100, latency: 1 ps}"), "link.yaml:",
               "outside what a real node fabric has");
}

TEST_CASE("bad input 8e: --window and serving.sliding_window_kv check their values") {
  const std::string serving = std::string(EXASIM_SOURCE_DIR) + "/configs/scenarios/llama2-70b-h100-serving.yaml";
  expect_command_error("run '" + serving + "' --set serving.sliding_window_kv=all", {"serving.sliding_window_kv", "window"});
  expect_command_error("kernel --gpu H100-SXM5-80GB --op attention_prefill --seq 4096 --heads 32 --window -1", {"--window"});
  expect_command_error("kernel --gpu H100-SXM5-80GB --op attention_prefill --seq 4096 --heads 32 --window 128 --no-causal",
                       {"--window", "causal"});
}

TEST_CASE("hostile input: a scenario name of invalid UTF-8 still gives valid --json") {
  // Issue 29's fuzzing: nlohmann's dump threw type_error 316 (exit 4, "internal") on the bytes.
  const std::string path = scenario("utf8", replace(kGood, "name: bad-input-base", "name: \"bad \xff\xfe name\""));
  const std::string json = (std::filesystem::temp_directory_path() / "exasim_bad_input" / "utf8.json").string();
  const CliResult r = run_cli("run '" + path + "' --json '" + json + "'");
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(contains(text, "\"bad \xef\xbf\xbd\xef\xbf\xbd name\""));  // each bad byte as U+FFFD
}
