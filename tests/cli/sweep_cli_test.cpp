// `exasim sweep`: a grid and a list of overrides over a base scenario, results as JSON and CSV,
// a point that cannot run recorded as an error row; under mpirun -np 2 the files are
// byte-identical to a serial run's (when exasim was built with MPI and mpirun is installed).
#include <doctest/doctest.h>
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

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A folder with a small scenario and a sweep over it.
fs::path sweep_folder() {
  const fs::path dir = fs::temp_directory_path() / ("exasim-sweep-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "small.yaml") << exasim::testing::small_gpt_yaml();
  std::ofstream(dir / "sweep.yaml") << R"(
name: small-sweep
base: small.yaml
grid:
  training.micro_batch: [1, 2]
  power.gpu_cap: [400 W, 250 W]
points:
  - {training.parallelism.tp: 3}
  - {training.parallelism: {tp: 4, pp: 1, dp: 4}}
)";
  return dir;
}

}  // namespace

TEST_CASE("sweep: grid and points, JSON and CSV, errors as rows") {
  const fs::path dir = sweep_folder();
  const auto r = run_cli("sweep " + (dir / "sweep.yaml").string() + " --json " + (dir / "s.json").string() + " --csv " +
                         (dir / "s.csv").string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(dir / "s.json"));
  REQUIRE(j["points"].size() == 6);
  // Grid first, first key slowest; then the listed points.
  CHECK(j["points"][0]["set"]["training.micro_batch"] == "1");
  CHECK(j["points"][1]["set"]["power.gpu_cap"] == "250 W");
  CHECK(j["points"][2]["set"]["training.micro_batch"] == "2");
  CHECK(j["points"][5]["set"]["training.parallelism"] == "{tp: 4, pp: 1, dp: 4}");
  // Each result has `exasim run`'s keys; the cap shows in power and clock.
  const auto& p0 = j["points"][0]["result"];
  for (const char* key : {"iteration_time_s", "tokens_per_s", "mfu", "memory", "power", "energy", "cost", "training"}) CHECK(p0.contains(key));
  CHECK(j["points"][1]["result"]["power"]["gpu_cap_w"] == 250.0);
  CHECK(j["points"][1]["result"]["power"]["peak_per_gpu_w"].get<double>() <= 250.0);
  CHECK(j["points"][1]["result"]["iteration_time_s"].get<double>() > p0["iteration_time_s"].get<double>());
  CHECK(j["points"][2]["result"]["training"]["micro_batch"] == 2);
  // tp 3 does not divide 16 heads: an error row, the sweep goes on.
  CHECK(contains(j["points"][4]["error"].get<std::string>(), "does not divide"));
  CHECK(j["points"][5]["result"]["training"]["parallelism"]["tp"] == 4);
  const std::string csv = slurp(dir / "s.csv");
  CHECK(csv.starts_with("index,training.micro_batch,power.gpu_cap,training.parallelism.tp,training.parallelism,iteration_time_s,"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 7);
  fs::remove_all(dir);
}

TEST_CASE("sweep: bad sweep files give one-line errors") {
  const fs::path dir = sweep_folder();
  std::ofstream(dir / "bad.yaml") << "base: small.yaml\ngrid: {training.micro_batch: 2}\n";
  exasim::testing::check_clean_error(run_cli("sweep " + (dir / "bad.yaml").string()));
  std::ofstream(dir / "missing.yaml") << "base: nowhere.yaml\npoints: [{training.zero: 1}]\n";
  exasim::testing::check_clean_error(run_cli("sweep " + (dir / "missing.yaml").string()));
  fs::remove_all(dir);
}

TEST_CASE("sweep under mpirun -np 2 writes byte-identical results to a serial run") {
#ifndef EXASIM_MPIEXEC
  MESSAGE("exasim was built without MPI (or mpirun was not found): skipped");
#else
  const fs::path dir = sweep_folder();
  const std::string sweep = (dir / "sweep.yaml").string();
  const auto serial = run_cli("sweep " + sweep + " --json " + (dir / "serial.json").string() + " --csv " + (dir / "serial.csv").string());
  REQUIRE(serial.status == 0);
  // As root mpirun needs explicit consent; --oversubscribe lets 2 ranks share fewer cores.
  const std::string cmd = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 '" + std::string(EXASIM_MPIEXEC) +
                          "' --allow-run-as-root --oversubscribe -np 2 '" + EXASIM_BINARY + "' sweep " + sweep + " --json " +
                          (dir / "mpi.json").string() + " --csv " + (dir / "mpi.csv").string() + " 2>&1";
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  INFO(out);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK(contains(out, "over 2 MPI ranks"));
  CHECK(slurp(dir / "mpi.json") == slurp(dir / "serial.json"));
  CHECK(slurp(dir / "mpi.csv") == slurp(dir / "serial.csv"));
  fs::remove_all(dir);
#endif
}
