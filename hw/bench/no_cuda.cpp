// Built instead of hw/bench/cuda/ when CMake found no CUDA compiler (or EXASIM_CUDA=off).
#include <ostream>

#include "hw/bench/suite.hpp"

namespace exasim::bench {

std::vector<Suite> gpu_suites() { return {}; }

void add_gpu_devices(hw::Profile& profile, std::ostream& log) {
  const char* note = "this exasim-bench was built without CUDA (no nvcc found, or EXASIM_CUDA=off): GPU suites skipped";
  profile.notes.emplace_back(note);
  log << "exasim-bench: " << note << "\n";
}

}  // namespace exasim::bench
