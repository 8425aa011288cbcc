#include "models/cpu/cpu_memory_model.hpp"

#include <doctest/doctest.h>

#include "approx.hpp"

#include <numeric>

using namespace exasim::models;

namespace {

// A CPU with round numbers, so that every expected value below is a hand calculation.
CpuParams params() {
  CpuParams p;
  p.l1d_bytes = 32e3;
  p.l2_bytes = 1e6;
  p.l3_bytes = 32e6;
  p.all_threads = 4;
  p.one_core = {LevelBandwidth{400e9, 200e9}, LevelBandwidth{200e9, 100e9}, LevelBandwidth{100e9, 50e9},
                LevelBandwidth{20e9, 10e9}};
  p.all_cores = {LevelBandwidth{1600e9, 800e9}, LevelBandwidth{800e9, 400e9}, LevelBandwidth{300e9, 150e9},
                 LevelBandwidth{60e9, 30e9}};
  p.loop_overhead_s = 1e-7;
  p.fork_join_s = 1e-6;
  p.latency_s = {1e-9, 4e-9, 15e-9, 100e-9};
  return p;
}

}  // namespace

TEST_CASE("cpu memory: a working set inside a level is served by that level and the nearer ones") {
  const CpuParams p = params();
  auto f = level_fractions(p, 16e3, 1);
  CHECK(f[0] == exasim::testing::approx(1.0));
  f = level_fractions(p, 500e3, 1);  // L2 holds it; L1 still holds 32 of the 500 kB
  CHECK(f[0] == exasim::testing::approx(32e3 / 500e3));
  CHECK(f[1] == exasim::testing::approx(1 - 32e3 / 500e3));
  f = level_fractions(p, 64e3, 4);  // four private L1s hold 128 kB
  CHECK(f[0] == exasim::testing::approx(1.0));
}

TEST_CASE("cpu memory: beyond a level's capacity the hit fraction is capacity / working set") {
  CpuParams p = params();
  auto f = level_fractions(p, 64e6, 1);  // L3 holds half, DRAM serves the rest
  CHECK(f[2] + f[1] + f[0] == exasim::testing::approx(0.5));
  CHECK(f[3] == exasim::testing::approx(0.5));
  p.sharpness[2] = 2;  // a sharper level lets go faster: (1/2)^2
  f = level_fractions(p, 64e6, 1);
  CHECK(f[3] == exasim::testing::approx(0.75));
  p.effective_capacity[2] = 0.5;  // half the L3 usable: (16/64)^2 hit
  f = level_fractions(p, 64e6, 1);
  CHECK(f[3] == exasim::testing::approx(1 - 1.0 / 16));
  for (double ws : {1e3, 1e5, 3e6, 1e8, 1e10}) {
    const auto g = level_fractions(p, ws, 2);
    CHECK(std::accumulate(g.begin(), g.end(), 0.0) == exasim::testing::approx(1.0));
    for (double x : g) CHECK(x >= 0);
  }
}

TEST_CASE("cpu memory: stream time is overhead plus bytes over the level's read and write bandwidth") {
  const CpuParams p = params();
  // 16 kB read + 8 kB written from L1 on one thread: 1e-7 + 16e3/400e9 + 8e3/200e9.
  CHECK(cpu_stream_time(p, 16e3, 8e3, 24e3, 1) == exasim::testing::approx(1e-7 + 4e-8 + 4e-8));
  // 1 GB from DRAM on all four threads, plus the fork and join: the shared bandwidth.
  // Nested levels: four L1s hold 128 kB of it, four L2s 4 MB, the L3 32 MB, DRAM the rest.
  const double ws = 1e9;
  const double l1 = 128e3 / ws, l2 = 4e6 / ws - l1, l3 = 32e6 / ws - 4e6 / ws, dram = 1 - 32e6 / ws;
  const double expected = 1e-7 + 1e-6 + l1 * (ws / 1600e9) + l2 * (ws / 800e9) + l3 * (ws / 300e9) + dram * (ws / 60e9);
  CHECK(cpu_stream_time(p, ws, 0, ws, 4) == exasim::testing::approx(expected));
}

TEST_CASE("cpu memory: bytes that are only read go at the read-only bandwidth, `read` where it was not measured") {
  CpuParams p = params();
  // 1 MB from DRAM (a working set no cache holds) on one thread: read-only not measured, `read`.
  const double cold = 1e15;
  CHECK(cpu_read_only_transfer_time(p, 1e6, cold, 1) == exasim::testing::approx(cpu_transfer_time(p, 1e6, 0, cold, 1)));
  p.one_core[3].read_only = 12.5e9;
  p.all_cores[3].read_only = 50e9;
  CHECK(cpu_read_only_transfer_time(p, 1e6, cold, 1) == exasim::testing::approx(1e6 / 12.5e9));
  CHECK(cpu_read_only_stream_time(p, 1e6, cold, 1) == exasim::testing::approx(1e-7 + 1e6 / 12.5e9));
  // Two threads: twice one core's, under the all-cores figure; four: the all-cores figure, plus fork and join.
  CHECK(level_bandwidth(p, CpuLevel::kDram, 2).read_only == exasim::testing::approx(25e9));
  CHECK(cpu_read_only_stream_time(p, 1e6, cold, 4) == exasim::testing::approx(1e-7 + 1e-6 + 1e6 / 50e9));
  CHECK(level_bandwidth(p, CpuLevel::kDram, 2).read == exasim::testing::approx(40e9));  // the STREAM figure unchanged
}

TEST_CASE("cpu memory: bandwidth grows with threads up to the all-cores figure") {
  const CpuParams p = params();
  CHECK(level_bandwidth(p, CpuLevel::kDram, 1).read == exasim::testing::approx(20e9));
  CHECK(level_bandwidth(p, CpuLevel::kDram, 2).read == exasim::testing::approx(40e9));
  CHECK(level_bandwidth(p, CpuLevel::kDram, 3).read == exasim::testing::approx(60e9));  // saturated
  CHECK(level_bandwidth(p, CpuLevel::kDram, 4).read == exasim::testing::approx(60e9));
  CHECK(level_bandwidth(p, CpuLevel::kL1, 2).read == exasim::testing::approx(800e9));
  CHECK(level_bandwidth(p, CpuLevel::kL1, 8).read == exasim::testing::approx(1600e9));  // no more than all cores
}

TEST_CASE("cpu memory: latency blends the levels by the share each serves") {
  const CpuParams p = params();
  CHECK(cpu_access_latency(p, 8e3) == exasim::testing::approx(1e-9));
  // 64 MB: L1 holds 32 kB of it, L2 1 MB, L3 32 MB (half), DRAM the other half.
  const double l1 = 32e3 / 64e6, l2 = 1e6 / 64e6 - l1, l3 = 0.5 - 1e6 / 64e6;
  CHECK(cpu_access_latency(p, 64e6) == exasim::testing::approx(l1 * 1e-9 + l2 * 4e-9 + l3 * 15e-9 + 0.5 * 100e-9));
  double last = 0;
  for (double ws = 1e3; ws < 1e10; ws *= 2) {  // monotone in the working set
    const double l = cpu_access_latency(p, ws);
    CHECK(l >= last);
    last = l;
  }
}

TEST_CASE("cpu memory: spec defaults are physical") {
  exasim::hw::CpuSpec s;
  s.name = "test";
  s.cores = 64;
  s.base_clock_hz = 2e9;
  s.simd_width_bits = 512;
  s.fma_units_per_core = 2;
  s.memory_bandwidth = 300e9;
  s.l3_bytes = 256e6;
  const CpuParams p = CpuParams::defaults_for(s);
  CHECK(p.one_core[0].read == exasim::testing::approx(2 * 64 * 2e9));  // two 64-byte loads per cycle
  CHECK(p.all_cores[3].read == exasim::testing::approx(0.8 * 300e9));
  CHECK(p.one_core[3].read < p.all_cores[3].read);  // one core cannot use the whole socket's DRAM bandwidth
  for (CpuLevel l : {CpuLevel::kL1, CpuLevel::kL2, CpuLevel::kL3}) {
    const auto i = static_cast<std::size_t>(l);
    CHECK(p.one_core[i].read > p.one_core[i + 1].read);  // nearer levels are faster
    CHECK(p.latency_s[i] < p.latency_s[i + 1]);
  }
}
