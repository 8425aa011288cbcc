// `exasim collective` and `exasim topo` as users and scripts run them.
#include <doctest/doctest.h>

#include "approx.hpp"
#include <nlohmann/json.hpp>

#include "../cli/cli_runner.hpp"

using exasim::testing::check_clean_error;
using exasim::testing::contains;
using exasim::testing::run_cli;

TEST_CASE("cli: collective --json gives time, algorithm and both bandwidths") {
  const auto r = run_cli("collective --cluster dgx-a100 --op all_reduce --bytes 1GiB --ranks 8 --json");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.output);
  for (const char* key : {"time_s", "algorithm", "bus_bandwidth", "algorithm_bandwidth"}) CHECK(j.contains(key));
  // busbw = algbw x 2(n-1)/n for all-reduce (nccl-tests convention).
  CHECK(j["bus_bandwidth"].get<double>() == exasim::testing::approx(j["algorithm_bandwidth"].get<double>() * 1.75));
  CHECK(j["algorithm_bandwidth"].get<double>() == exasim::testing::approx(1073741824.0 / j["time_s"].get<double>()));
}

TEST_CASE("cli: collective under both fidelities, group layouts, a forced algorithm, a cluster file") {
  const auto a = run_cli("collective --cluster dgx-a100 --op all_reduce --bytes 64MiB --ranks 16 --group-layout 2x8 --json");
  const auto f = run_cli(
      "collective --cluster dgx-a100 --op all_reduce --bytes 64MiB --ranks 16 --group-layout 2x8 --fidelity flow --json");
  REQUIRE(a.status == 0);
  REQUIRE(f.status == 0);
  const double ta = nlohmann::json::parse(a.output)["time_s"], tf = nlohmann::json::parse(f.output)["time_s"];
  CHECK(tf == exasim::testing::approx(ta).epsilon(0.05));
  const auto ring = run_cli("collective --cluster dgx-a100 --op reduce_scatter --bytes 1MiB --ranks 4 --group-layout spread "
                            "--algorithm ring --json");
  REQUIRE(ring.status == 0);
  CHECK(nlohmann::json::parse(ring.output)["algorithm"] == "ring");
  const auto table = run_cli("collective --cluster configs/clusters/a100-dgx-vidur.yaml --op send_recv --bytes 64MiB "
                             "--ranks 2 --group-layout 0,8");
  INFO(table.output);
  CHECK(table.status == 0);
  CHECK(contains(table.output, "bus bandwidth"));
  CHECK(contains(table.output, "direct"));
}

TEST_CASE("cli: collective errors are one line") {
  check_clean_error(run_cli("collective --cluster dgx-a100 --op allreduce --bytes 1MiB --ranks 8"));
  check_clean_error(run_cli("collective --cluster dgx-a100 --op all_reduce --bytes 1MiB --ranks 8 --algorithm tree"));
  check_clean_error(run_cli("collective --cluster no-such-node --op all_reduce --bytes 1MiB --ranks 8"));
  check_clean_error(run_cli("collective --cluster dgx-a100 --op all_reduce --bytes lots --ranks 8"));
  check_clean_error(run_cli("collective --cluster dgx-a100 --op all_reduce --bytes 1MiB --ranks 8 --group-layout 3x3"));
  check_clean_error(run_cli("collective --cluster dgx-a100 --op all_reduce --bytes 1MiB --ranks 8 --fidelity packet"));
}

TEST_CASE("cli: topo prints a summary or Graphviz dot") {
  const auto s = run_cli("topo configs/scenarios/gpt3-175b-a100-1024.yaml --summary");
  INFO(s.output);
  CHECK(s.status == 0);
  CHECK(contains(s.output, "fat-tree"));
  CHECK(contains(s.output, "gpu 1024"));
  CHECK(contains(s.output, "network switches: 48"));
  const auto d = run_cli("topo dgx-a100 --nodes 2 --dot");
  CHECK(d.status == 0);
  CHECK(d.output.starts_with("graph topology {"));
  CHECK(contains(d.output, "n1/gpu7"));
  const auto help = run_cli("topo --help");
  CHECK(contains(help.output, "rail-optimized"));
  CHECK(contains(help.output, "dragonfly"));
  check_clean_error(run_cli("topo no-such-file.yaml"));
}
