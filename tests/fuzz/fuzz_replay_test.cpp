// The fuzz targets' committed seeds and regressions, replayed through the same entry points as
// `make fuzz` runs (fuzz/fuzz_inputs.hpp): each is accepted or refused with an exasim::Error; any
// other exception fails here (a crash or a hang fails the whole executable, as it should).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "fuzz/fuzz_inputs.hpp"

namespace fs = std::filesystem;
using exasim::fuzz::fuzz_targets;

namespace {

const fs::path kFuzz = fs::path(EXASIM_SOURCE_DIR) / "fuzz";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int replay(const char* kind) {
  int n = 0;
  for (const auto& t : fuzz_targets()) {
    const fs::path dir = kFuzz / kind / t.name;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      CAPTURE(e.path().string());
      CHECK_NOTHROW(exasim::fuzz::run_fuzz_input(t, read(e.path())));
      ++n;
    }
  }
  return n;
}

}  // namespace

TEST_CASE("fuzz: every target has a seed corpus, and every corpus a target") {
  std::set<std::string> names;
  for (const auto& t : fuzz_targets()) {
    names.insert(t.name);
    CAPTURE(t.name);
    CHECK(fs::is_directory(kFuzz / "corpus" / t.name));
    CHECK_FALSE(fs::is_empty(kFuzz / "corpus" / t.name));
  }
  for (const char* kind : {"corpus", "regressions"})
    for (const auto& e : fs::directory_iterator(kFuzz / kind)) CHECK(names.count(e.path().filename().string()) == 1);
}

TEST_CASE("fuzz: the seed corpora are accepted or refused cleanly") { CHECK(replay("corpus") >= 20); }

TEST_CASE("fuzz: the regression inputs (issue 29's crashes, hangs and internal errors) are refused cleanly") {
  CHECK(replay("regressions") >= 15);
}
