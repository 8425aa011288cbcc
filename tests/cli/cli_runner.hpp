#pragma once
// Runs the built exasim binary the way users and scripts do, capturing output and exit code.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace exasim::testing {

struct CliResult {
  std::string output;  // stdout and stderr together
  int status = -1;     // exit code; -1 if the process did not exit normally
};

inline CliResult run_cli(const std::string& args) {
  const std::string command = std::string("'") + EXASIM_BINARY + "' " + args + " 2>&1";
  CliResult r;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// An error as DESIGN.md promises it: one line, "exasim: error: ...", non-zero exit, no crash.
inline void check_clean_error(const CliResult& r) {
  INFO("output: ", r.output);
  CHECK(r.status > 0);
  CHECK(r.output.starts_with("exasim: error: "));
  CHECK(r.output.ends_with("\n"));
  CHECK(r.output.find('\n') == r.output.size() - 1);
  CHECK_FALSE(contains(r.output, "terminate"));
  CHECK_FALSE(contains(r.output, "what()"));
  CHECK_FALSE(contains(r.output, "Aborted"));
  CHECK_FALSE(contains(r.output, "internal"));
}

}  // namespace exasim::testing
