#include "models/power/gpu_power.hpp"

#include <algorithm>

namespace exasim::models {

namespace {

// HBM access energy: 3.9 pJ/bit for HBM2 (O'Connor et al., "Fine-Grained DRAM", MICRO'17,
// Table 1); taken for HBM2e/HBM3/HBM3e too (estimate: per-bit energy has changed little while
// bandwidth grew). A100 80GB: 2.04 TB/s x 8 x 3.9 pJ = 64 W; H100: 105 W.
constexpr double kHbmJoulesPerBit = 3.9e-12;
// Scale-up SerDes energy: ~2 pJ/bit for 50-100 Gb/s short-reach lanes (estimate from published
// 112G SerDes of 1.5-2.5 pJ/bit). A100 NVLink 2 x 300 GB/s: 10 W.
constexpr double kLinkJoulesPerBit = 2.0e-12;
// Share of the dynamic range left after HBM and links drawn by a busy SM outside its matrix units
// (vector ALUs, register files, schedulers, L1/L2): estimate, after AccelWattch (Kandiah et al.,
// MICRO'21), which attributes a large part of dynamic power to SM structures besides the FP units.
constexpr double kVectorShare = 0.25;

double clamp01(double x) { return std::clamp(x, 0.0, 1.0); }

}  // namespace

GpuPowerSplit power_split(const hw::GpuSpec& gpu) {
  const double range = std::max(0.0, gpu.tdp_w - gpu.idle_power_w);
  GpuPowerSplit s;
  // Memory and links first, each at most a third of the range (so odd specs stay sane).
  s.hbm_w = std::min(range / 3, gpu.hbm_bandwidth * 8 * kHbmJoulesPerBit);
  s.link_w = std::min(range / 3, 2 * gpu.scaleup_bandwidth * 8 * kLinkJoulesPerBit);
  s.vector_w = kVectorShare * (range - s.hbm_w - s.link_w);
  // The dense GEMM anchor draws TDP: idle + a_m matrix + vector + a_h hbm = TDP.
  s.matrix_w = std::max(0.0, (range - kDenseGemm.vector * s.vector_w - kDenseGemm.hbm * s.hbm_w) / kDenseGemm.matrix);
  return s;
}

double gpu_power_w(const hw::GpuSpec& gpu, const UnitActivity& a, ClockPoint clock) {
  const GpuPowerSplit s = power_split(gpu);
  const double v2 = clock.voltage * clock.voltage;
  return gpu.idle_power_w + s.matrix_w * clamp01(a.matrix) * v2 + s.vector_w * clamp01(a.vector) * clock.frequency * v2 +
         s.hbm_w * clamp01(a.hbm) + s.link_w * clamp01(a.link);
}

double gpu_power_w(const hw::GpuSpec& gpu, double utilization) {
  const double u = clamp01(utilization);
  return gpu.idle_power_w + (gpu.tdp_w - gpu.idle_power_w) * u;
}

}  // namespace exasim::models
