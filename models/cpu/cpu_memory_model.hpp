#pragma once
// Memory-bound work on a CPU: where a working set lives and what that level delivers.
// A working set of W bytes used by t threads hits level i with probability min(1, C_i / W)^s_i,
// C_i the level's effective capacity (private levels count once per thread) and s_i how sharply
// the level lets go of a working set that does not fit; what no cache holds comes from DRAM. Time is the overhead of the call plus, per level, the bytes it serves over
// its read or write bandwidth at t threads: min(t x one core, all cores).
#include <array>

#include "models/cpu/cpu_params.hpp"

namespace exasim::models {

// Fraction of accesses each level serves (sums to 1), by CpuLevel.
std::array<double, 4> level_fractions(const CpuParams& p, double working_set_bytes, int threads);

// Bandwidth of a level at `threads` threads (1 <= threads).
LevelBandwidth level_bandwidth(const CpuParams& p, CpuLevel level, int threads);

// Seconds to read `read_bytes` and write `write_bytes` over a working set of `working_set_bytes`
// with `threads` threads, without the call's fixed cost (GEMM uses it for its operand traffic).
double cpu_transfer_time(const CpuParams& p, double read_bytes, double write_bytes, double working_set_bytes,
                         int threads);

// A streaming call (STREAM, memcpy, elementwise ops): transfer time plus the fixed cost of a call
// on one thread, and of the fork and join when threads > 1.
double cpu_stream_time(const CpuParams& p, double read_bytes, double write_bytes, double working_set_bytes,
                       int threads);

// The same for bytes that are only read, at the levels' read-only bandwidth (LevelBandwidth).
double cpu_read_only_transfer_time(const CpuParams& p, double read_bytes, double working_set_bytes, int threads);
double cpu_read_only_stream_time(const CpuParams& p, double read_bytes, double working_set_bytes, int threads);

// Mean load-to-use latency of dependent loads spread at random over the working set (one thread).
double cpu_access_latency(const CpuParams& p, double working_set_bytes);

}  // namespace exasim::models
