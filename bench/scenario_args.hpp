#pragma once
// The scenario benches' command line: scenario paths (or their defaults), or --help. A path that
// does not load is reported and the others still run; the exit status says whether any failed.
#include <cstdio>
#include <string>
#include <vector>

#include "hw/error.hpp"

namespace exasim::benchmarks {

template <class Bench>
int run_scenarios(int argc, char** argv, std::vector<std::string> defaults, Bench&& bench) {
  std::vector<std::string> paths(argv + 1, argv + argc);
  if (paths.empty()) paths = std::move(defaults);
  int failed = 0;
  for (const std::string& p : paths) {
    if (p == "-h" || p == "--help") {
      std::printf("usage: %s [SCENARIO.yaml ...]\n", argv[0]);
      return 0;
    }
    try {
      bench(p);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s: %s\n", argv[0], e.describe().c_str());
      failed = 1;
    }
  }
  return failed;
}

}  // namespace exasim::benchmarks
