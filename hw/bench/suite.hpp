#pragma once
// What a benchmark suite of exasim-bench is: a name, the kind of device it measures, and a function
// that measures one device and appends to the profile. Suites never exit: failures throw.
#include <iosfwd>
#include <string>
#include <vector>

#include "hw/profile/profile.hpp"

namespace exasim::bench {

struct Options {
  bool quick = false;  // fewer sizes and repeats: the whole CPU run in well under a minute
  int threads = 0;     // "all cores" thread count; 0 = every online CPU
};

// Where a suite records its measurements; it also prints one line per measurement to `log`.
struct Recorder {
  const Options& options;
  hw::Profile& profile;
  std::ostream& log;

  // Appends `m` and prints it with the rate that matters for its suite.
  void add(const hw::Measurement& m);
};

struct Suite {
  std::string name;         // --suite name; several suites may share it across device kinds
  std::string device_kind;  // "cpu" or "gpu"
  std::string description;
  void (*run)(Recorder& rec, const hw::ProfileDevice& device);
};

// The suites of this build: the CPU suites always, the CUDA suites when built with CUDA.
std::vector<Suite> cpu_suites();
std::vector<Suite> gpu_suites();

// CUDA devices visible now, appended to `profile.devices` (indices after the CPU's); when none is
// visible (or the build has no CUDA) a note saying why is added to the profile and printed.
void add_gpu_devices(hw::Profile& profile, std::ostream& log);

}  // namespace exasim::bench
