#include "models/cpu/cpu_memory_model.hpp"

#include <algorithm>
#include <cmath>

namespace exasim::models {

std::array<double, 4> level_fractions(const CpuParams& p, double working_set_bytes, int threads) {
  const double t = std::max(threads, 1);
  const std::array<double, 3> capacity = {p.l1d_bytes * t * p.effective_capacity[0],
                                          p.l2_bytes * t * p.effective_capacity[1],
                                          p.l3_bytes * p.effective_capacity[2]};
  std::array<double, 4> f{};
  double covered = 0;  // fraction held by this level or a nearer one (levels are nested)
  for (std::size_t i = 0; i < 3; ++i) {
    const double hit =
        working_set_bytes <= 0 ? 1.0 : std::pow(std::min(1.0, capacity[i] / working_set_bytes), p.sharpness[i]);
    const double here = std::max(hit, covered);
    f[i] = here - covered;
    covered = here;
  }
  f[3] = 1.0 - covered;
  return f;
}

LevelBandwidth level_bandwidth(const CpuParams& p, CpuLevel level, int threads) {
  const auto i = static_cast<std::size_t>(level);
  const double t = std::max(threads, 1);
  auto measured = [](LevelBandwidth b) {  // read-only: `read` where nothing measured it
    if (b.read_only <= 0) b.read_only = b.read;
    return b;
  };
  const LevelBandwidth one = measured(p.one_core[i]), all = measured(p.all_cores[i]);
  if (threads <= 1) return one;
  if (threads >= p.all_threads) return all;  // more threads than cores gain nothing
  // In between: each thread adds one core's bandwidth until the level's shared limit.
  auto between = [&](double LevelBandwidth::*f) { return std::min(t * (one.*f), std::max(all.*f, one.*f)); };
  return {between(&LevelBandwidth::read), between(&LevelBandwidth::write), between(&LevelBandwidth::read_only)};
}

namespace {

// Seconds over the levels that serve a working set: each level's share of it times what
// `seconds` (of that level's bandwidth at `threads` threads) gives for the whole of it.
template <class Seconds>
double over_levels(const CpuParams& p, double working_set_bytes, int threads, Seconds seconds) {
  const std::array<double, 4> f = level_fractions(p, working_set_bytes, threads);
  double s = 0;
  for (CpuLevel l : kCpuLevels) {
    const double share = f[static_cast<std::size_t>(l)];
    if (share > 0) s += share * seconds(level_bandwidth(p, l, threads));
  }
  return s;
}

// A call's fixed cost: the loop on one thread, and the fork and join on several.
double call_overhead(const CpuParams& p, int threads) { return p.loop_overhead_s + (threads > 1 ? p.fork_join_s : 0.0); }

}  // namespace

double cpu_transfer_time(const CpuParams& p, double read_bytes, double write_bytes, double working_set_bytes,
                         int threads) {
  return over_levels(p, working_set_bytes, threads,
                     [&](const LevelBandwidth& b) { return read_bytes / b.read + write_bytes / b.write; });
}

double cpu_stream_time(const CpuParams& p, double read_bytes, double write_bytes, double working_set_bytes,
                       int threads) {
  return call_overhead(p, threads) + cpu_transfer_time(p, read_bytes, write_bytes, working_set_bytes, threads);
}

double cpu_read_only_transfer_time(const CpuParams& p, double read_bytes, double working_set_bytes, int threads) {
  return over_levels(p, working_set_bytes, threads, [&](const LevelBandwidth& b) { return read_bytes / b.read_only; });
}

double cpu_read_only_stream_time(const CpuParams& p, double read_bytes, double working_set_bytes, int threads) {
  return call_overhead(p, threads) + cpu_read_only_transfer_time(p, read_bytes, working_set_bytes, threads);
}

double cpu_access_latency(const CpuParams& p, double working_set_bytes) {
  const std::array<double, 4> f = level_fractions(p, working_set_bytes, 1);
  double s = 0;
  for (std::size_t i = 0; i < 4; ++i) s += f[i] * p.latency_s[i];
  return s;
}

}  // namespace exasim::models
