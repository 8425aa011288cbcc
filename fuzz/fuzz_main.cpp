// One libFuzzer target (EXASIM_FUZZ_TARGET names it, fuzz/fuzz_inputs.hpp): an exception other
// than exasim::Error escapes and libFuzzer reports it as a crash, with the input.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "fuzz/fuzz_inputs.hpp"

namespace {

const exasim::fuzz::FuzzTarget& target() {
  for (const auto& t : exasim::fuzz::fuzz_targets())
    if (std::strcmp(t.name, EXASIM_FUZZ_TARGET) == 0) return t;
  __builtin_trap();  // a target without an entry: a build error in spirit
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  exasim::fuzz::run_fuzz_input(target(), std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
