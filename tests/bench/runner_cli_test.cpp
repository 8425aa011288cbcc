// exasim-bench as a program: its suite list, its errors, and what it does without a GPU.
#include <doctest/doctest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "hw/profile/profile.hpp"

namespace {

struct Run {
  int status = -1;
  std::string output;
};

Run run(const std::string& args) {
  Run r;
  const std::string command = std::string(EXASIM_BENCH_BINARY) + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  REQUIRE(pipe);
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), pipe.get())) r.output += buf.data();
  r.status = pclose(pipe.release());
  return r;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("runner cli: --list names the CPU suites and says whether CUDA suites were built") {
  const Run r = run("--list");
  INFO(r.output);
  CHECK(r.status == 0);
  for (const char* suite : {"stream (cpu)", "gemm (cpu)", "latency (cpu)", "memcpy (cpu)"}) CHECK(contains(r.output, suite));
  CHECK((contains(r.output, "has the CUDA suites") || contains(r.output, "has no CUDA suites")));
}

TEST_CASE("runner cli: an unknown suite is a one-line error with the closest name") {
  const Run r = run("--suite streem -o /dev/null");
  INFO(r.output);
  CHECK(r.status != 0);
  CHECK(contains(r.output, "exasim-bench: error: <command line>: --suite: unknown suite \"streem\""));
  CHECK(contains(r.output, "did you mean \"stream\""));
}

TEST_CASE("runner cli: without a GPU the runner says so and still measures the CPU") {
  const std::string path = "/tmp/exasim_runner_cli_" + std::to_string(::getpid()) + ".json";
  const Run r = run("--quick --suite latency -o " + path);
  INFO(r.output);
  REQUIRE(r.status == 0);
  const exasim::hw::Profile p = exasim::hw::read_profile(path);
  bool gpu = false;
  for (const auto& d : p.devices) gpu = gpu || d.kind == "gpu";
  if (!gpu) {
    CHECK((contains(r.output, "no CUDA GPU visible") || contains(r.output, "built without CUDA")));
    REQUIRE(!p.notes.empty());
    CHECK((contains(p.notes[0], "no CUDA GPU visible") || contains(p.notes[0], "built without CUDA")));
  }
  int cpu_latency = 0;
  for (const auto& m : p.measurements) cpu_latency += m.suite == "latency" && m.device == 0;
  CHECK(cpu_latency >= 8);  // L1 to DRAM working sets
  std::remove(path.c_str());
}
