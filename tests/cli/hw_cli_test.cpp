// Runs the built exasim binary and checks what users and scripts see: output, JSON fields and
// exit codes.
#include <doctest/doctest.h>

#include "approx.hpp"
#include <nlohmann/json.hpp>

#include <string>

#include "cli_runner.hpp"

namespace {

using exasim::testing::check_clean_error;
using exasim::testing::contains;
using Result = exasim::testing::CliResult;
Result run(const std::string& args) { return exasim::testing::run_cli(args); }

}  // namespace

TEST_CASE("cli: --version") {
  const Result r = run("--version");
  CHECK(r.status == 0);
  CHECK(contains(r.output, std::string("exasim ") + EXASIM_VERSION));
}

TEST_CASE("cli: hw list shows every catalog") {
  const Result r = run("hw list");
  INFO("output: ", r.output);
  CHECK(r.status == 0);
  for (const char* name : {"A100-SXM4-80GB", "MI300X", "nvlink4", "nvswitch-h100", "ib-hdr-200", "dgx-a100",
                           "host-cpu", "llama3.1-8b", "deepseek-v3"})
    CHECK(contains(r.output, name));
  for (const char* heading : {"GPUs", "Links", "Node fabrics", "NICs", "Nodes", "CPUs", "Models"})
    CHECK(contains(r.output, heading));
  CHECK(contains(r.output, "312 TFLOP/s"));  // A100 bf16 dense, formatted with its unit
  CHECK(contains(r.output, "25 GB/s"));      // ib-hdr-200: 200 Gb/s per direction
  CHECK(contains(r.output, "---"));          // header rule
}

TEST_CASE("cli: hw list --kind") {
  const Result gpus = run("hw list --kind gpu");
  CHECK(gpus.status == 0);
  CHECK(contains(gpus.output, "H100-SXM5-80GB"));
  CHECK_FALSE(contains(gpus.output, "ib-hdr-200"));
  CHECK_FALSE(contains(gpus.output, "llama"));
  const Result models = run("hw list --kind model");
  CHECK(models.status == 0);
  CHECK(contains(models.output, "mixtral-8x7b"));
  CHECK(contains(models.output, "128256"));  // llama3.1 vocab, read from the YAML
  CHECK_FALSE(contains(models.output, "A100"));
  // Failure rates: the per-GPU-hour column sums the GPU, HBM and software rates (9.2306 + 3.3908 +
  // 2.9670 e-6, configs/hw/failures.yaml).
  const Result failures = run("hw list --kind failures");
  CHECK(failures.status == 0);
  CHECK(contains(failures.output, "llama3-h100"));
  CHECK(contains(failures.output, "1.56e-05"));
  const Result storage = run("hw show tectonic-llama3 --json");
  CHECK(storage.status == 0);
  CHECK(contains(storage.output, "\"write_bandwidth_bytes_per_s\": 2000000000000.0"));
  const Result bad = run("hw list --kind gpus");
  CHECK(bad.status != 0);
  CHECK(contains(bad.output, "gpu"));
}

TEST_CASE("cli: hw show prints the fields with units") {
  const Result r = run("hw show A100-SXM4-80GB");
  INFO("output: ", r.output);
  CHECK(r.status == 0);
  CHECK(contains(r.output, "A100-SXM4-80GB"));
  CHECK(contains(r.output, "gpus.yaml"));  // where the entry is defined
  CHECK(contains(r.output, "HBM bandwidth"));
  CHECK(contains(r.output, "2.039 TB/s"));
  CHECK(contains(r.output, "400 W"));
  CHECK(contains(r.output, "nvswitch-a100"));
}

TEST_CASE("cli: hw show --json gives SI values") {
  const Result r = run("hw show A100-SXM4-80GB --json");
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j["name"] == "A100-SXM4-80GB");
  CHECK(j["catalog"] == "gpu");
  CHECK(j["hbm_bandwidth_bytes_per_s"].get<double>() == exasim::testing::approx(2.039e12));
  // "80 GB" as marketed or 80 GiB as the device reports it: the catalog may use either.
  CHECK(j["hbm_capacity_bytes"].get<double>() >= 80e9);
  CHECK(j["hbm_capacity_bytes"].get<double>() <= 80 * 1024.0 * 1024.0 * 1024.0);
  CHECK(j["peak_flop_per_s"]["bf16"].get<double>() == exasim::testing::approx(312e12));
  CHECK(j["measured_matmul_flop_per_s"]["bf16"].get<double>() == exasim::testing::approx(271.2e12));  // gpu_specs.yaml MAMF
  CHECK_FALSE(j["measured_matmul_flop_per_s"].contains("fp8"));  // no fp8 path on A100
  CHECK(j["tdp_w"].get<double>() == exasim::testing::approx(400));
  CHECK(j["sm_count"].get<int>() == 108);
  CHECK(j["node_fabric"] == "nvswitch-a100");

  const Result nic = run("hw show ib-hdr-200 --json");
  REQUIRE(nic.status == 0);
  const auto n = nlohmann::json::parse(nic.output);
  CHECK(n["catalog"] == "nic");
  CHECK(n["kind"] == "infiniband");
  CHECK(n["bandwidth_bytes_per_s"].get<double>() == exasim::testing::approx(25e9));
  CHECK(n["latency_s"].get<double>() > 0);

  const Result model = run("hw show llama3.1-8b --json");
  REQUIRE(model.status == 0);
  const auto m = nlohmann::json::parse(model.output);
  CHECK(m["catalog"] == "model");
  CHECK(m["layers"] == 32);
  CHECK(m["kv_heads"] == 8);
}

TEST_CASE("cli: a name in two catalogs") {
  // pcie-gen4 is both a link type and the fabric built from it.
  const Result text = run("hw show pcie-gen4");
  CHECK(text.status == 0);
  CHECK(contains(text.output, "link pcie-gen4"));
  CHECK(contains(text.output, "node fabric pcie-gen4"));
  const Result ambiguous = run("hw show pcie-gen4 --json");
  check_clean_error(ambiguous);
  CHECK(contains(ambiguous.output, "--kind"));
  const Result fabric = run("hw show pcie-gen4 --kind fabric --json");
  REQUIRE(fabric.status == 0);
  CHECK(nlohmann::json::parse(fabric.output)["catalog"] == "fabric");
}

TEST_CASE("cli: an unknown name is one clean error line") {
  const Result r = run("hw show NoSuchGpu");
  check_clean_error(r);
  CHECK(contains(r.output, "NoSuchGpu"));
  CHECK(contains(r.output, "hw list"));
  const Result near = run("hw show A100-SXM4-80G");
  check_clean_error(near);
  CHECK(contains(near.output, "did you mean \"A100-SXM4-80GB\""));
  const Result wrong_kind = run("hw show A100-SXM4-80GB --kind nic");
  check_clean_error(wrong_kind);
  CHECK(contains(wrong_kind.output, "--kind gpu"));
}

TEST_CASE("cli: a missing catalog folder is a clean error") {
  check_clean_error(run("--configs /nonexistent/exasim-configs hw list"));
}

TEST_CASE("cli: --help on every subcommand") {
  for (const std::string command : {"", "hw", "hw list", "hw show", "run", "validate"}) {
    const Result r = run(command + " --help");
    INFO("command: ", command, "\noutput: ", r.output);
    CHECK(r.status == 0);
    // The usage line names the subcommand, so this is its own help and not the top-level one.
    CHECK(contains(r.output, "Usage: "));
    CHECK(contains(r.output, "exasim " + (command.empty() ? "" : command + " ") + "[OPTIONS]"));
  }
  CHECK(contains(run("hw show --help").output, "--json"));
  CHECK(contains(run("hw list --help").output, "--kind"));
  const Result top = run("--help");
  for (const char* sub : {"run", "hw", "validate"}) CHECK(contains(top.output, sub));
}

TEST_CASE("cli: no subcommand is an error, not a crash") {
  const Result r = run("");
  CHECK(r.status != 0);
  CHECK_FALSE(contains(r.output, "terminate"));
  const Result hw = run("hw");
  CHECK(hw.status != 0);
  CHECK_FALSE(contains(hw.output, "terminate"));
}

TEST_CASE("cli: ./exasim in the repository's folder runs the built binary, as the README's examples do") {
  // Issue 28: the README called `exasim`, which was only at build/release/exasim. The wrapper runs
  // the binary this test suite was built with when the build folder is the default one.
  const std::string binary = EXASIM_BINARY;
  if (!binary.ends_with("/build/release/exasim")) return;  // another build folder: the wrapper does not apply
  const std::string command = "cd '" + std::string(EXASIM_SOURCE_DIR) + "' && ./exasim hw list --kind storage 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  CHECK(WEXITSTATUS(pclose(pipe)) == 0);
  CHECK(contains(out, "tectonic-llama3"));
}
