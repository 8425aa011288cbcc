#include "hw/bench/host_info.hpp"

#include <omp.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>

namespace exasim::bench {

namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// "48K", "1024K", "32768K", "32M" as /sys/devices/system/cpu/cpu0/cache/index*/size writes them.
double parse_size(const std::string& s) {
  if (s.empty()) return 0;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    return 0;
  }
  const char unit = used < s.size() ? s[used] : ' ';
  return v * (unit == 'K' ? 1024.0 : unit == 'M' ? 1048576.0 : unit == 'G' ? 1073741824.0 : 1.0);
}

// Data and unified cache sizes of cpu0 by level, from sysfs: it describes the caches this (virtual)
// machine has. sysconf(_SC_LEVEL3_CACHE_SIZE) reports CPUID, which on a VM can be the whole host
// socket's L3 (384 MiB where the guest sees one 32 MiB CCX), so it is only the fallback.
double cache(int level) {
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string lvl = read_line(dir + "level");
    if (lvl.empty()) break;
    const std::string type = read_line(dir + "type");
    if (std::stoi(lvl) == level && type != "Instruction") {
      return parse_size(read_line(dir + "size"));
    }
  }
  const int name = level == 1 ? _SC_LEVEL1_DCACHE_SIZE : level == 2 ? _SC_LEVEL2_CACHE_SIZE : _SC_LEVEL3_CACHE_SIZE;
  const long v = sysconf(name);
  return v > 0 ? static_cast<double>(v) : 0.0;
}

std::string cpuinfo_value(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return {};
}

// Physical cores: distinct (package, core) pairs of the online CPUs.
int physical_cores(int logical) {
  std::set<std::pair<std::string, std::string>> cores;
  for (int c = 0; c < logical; ++c) {
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    const std::string core = read_line(dir + "core_id");
    if (core.empty()) return logical;
    cores.insert({read_line(dir + "physical_package_id"), core});
  }
  return cores.empty() ? logical : static_cast<int>(cores.size());
}

// The vector width the compiler targets in this build: what Eigen and the STREAM loops use.
int compiled_simd_bits() {
#if defined(__AVX512F__)
  return 512;
#elif defined(__AVX2__) || defined(__AVX__)
  return 256;
#elif defined(__SSE2__) || defined(__ARM_NEON) || defined(__aarch64__)
  return 128;
#else
  return 64;
#endif
}

double clock_hz() {
  const std::string max_khz = read_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  if (!max_khz.empty()) return std::stod(max_khz) * 1e3;
  const std::string mhz = cpuinfo_value("cpu MHz");
  return mhz.empty() ? 0.0 : std::stod(mhz) * 1e6;
}

}  // namespace

double load_average() {
  const std::string s = read_line("/proc/loadavg");
  try {
    return s.empty() ? 0.0 : std::stod(s);
  } catch (...) {
    return 0.0;
  }
}

int all_threads(const Options& options) {
  return options.threads > 0 ? options.threads : omp_get_num_procs();
}

void describe_host(hw::Profile& p, const Options& options) {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  const int logical = omp_get_num_procs();
  const std::string model = cpuinfo_value("model name");
  p.host_text["hostname"] = name;
  p.host_text["cpu_model"] = model.empty() ? "unknown CPU" : model;
  p.host["cores"] = physical_cores(logical);
  p.host["threads"] = logical;
  p.host["l1d_bytes"] = cache(1);  // per core
  p.host["l2_bytes"] = cache(2);   // per core
  p.host["l3_bytes"] = cache(3);   // per L3 instance
  p.host["load_average_start"] = load_average();
  p.host["memory_bytes"] = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));

  hw::ProfileDevice cpu;
  cpu.index = 0;
  cpu.kind = "cpu";
  cpu.name = p.host_text["cpu_model"];
  cpu.compute_units = p.host["cores"];
  cpu.clock_hz = clock_hz();
  cpu.memory_bytes = p.host["memory_bytes"];
  cpu.l2_bytes = p.host["l2_bytes"];
  cpu.extra["l1d_bytes"] = p.host["l1d_bytes"];
  cpu.extra["l3_bytes"] = p.host["l3_bytes"];
  cpu.extra["threads"] = all_threads(options);
  cpu.extra["simd_width_bits"] = compiled_simd_bits();
  p.devices.push_back(cpu);
}

}  // namespace exasim::bench
