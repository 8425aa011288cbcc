#pragma once
// What each fuzz target feeds its input to: every reader of outside input, through the function
// a user's file reaches. An input is either accepted or refused with an exasim::Error (a located
// message); anything else escaping (another exception, a crash, a sanitizer report, a hang) is a
// finding. Shared by the libFuzzer targets (fuzz/fuzz_main.cpp, `make fuzz`) and the suite, which
// replays the committed corpora and regressions through the same functions (tests/fuzz).
#include <string_view>
#include <vector>

namespace exasim::fuzz {

struct FuzzTarget {
  const char* name;  // fuzz/corpus/<name>/, fuzz/regressions/<name>/
  void (*run)(std::string_view input);
};

const std::vector<FuzzTarget>& fuzz_targets();

// Runs `input` through `target`; exasim::Error (the input refused, with its place) is swallowed.
void run_fuzz_input(const FuzzTarget& target, std::string_view input);

}  // namespace exasim::fuzz
