#pragma once
// The `cpu:` section of a calibration file (configs/calibration/*.yaml): the CPU the parameters
// were fitted for (its spec: GEMM efficiencies are fractions of that spec's peak) and the fitted
// parameters, with units. Written by `exasim calibrate` from an exasim-bench profile.
//   cpu:
//     device: AMD EPYC            host: ...   date: ...   source: profile.json
//     spec: {cores: 2, base_clock: 2.596 GHz, simd_width_bits: 512, fma_units_per_core: 2, l3_size: 32 MiB}
//     all_threads: 2
//     matrix_vector_parallel: false
//     caches: {l1d: 48 KiB, l2: 1 MiB, l3: 32 MiB, l1d_effective: ..., l2_effective: ..., l3_effective: ...}
//     memory: {one_core: {l1: {read: ..., write: ...}, ...}, all_cores: {...}, loop_overhead: ..., fork_join: ...}
//     latency: {l1: 1.05 ns, l2: ..., l3: ..., dram: ...}
//     gemm: {one_core: {efficiency_fp32, efficiency_fp64, traffic_factor, overhead}, all_cores: {...}}
//     check: {...}                (errors on the check set, for the reader; not applied)
#include <map>
#include <string>

#include "hw/config/node.hpp"
#include "hw/cpu_spec.hpp"
#include "models/cpu/cpu_calibration.hpp"

namespace exasim::models {

struct CpuCalibrationInfo {
  std::string device, host, date, source;
  std::map<std::string, double> check;  // "gemm_one_core_median_error": 0.05, ...
};

// The file's text: a comment saying where it came from, then `cpu:`.
std::string cpu_calibration_yaml(const CpuCalibration& c, const CpuCalibrationInfo& info);

struct LoadedCpuCalibration {
  hw::CpuSpec spec;
  CpuParams params;
  CpuCalibrationInfo info;
};

// Reads a `cpu:` mapping (every parameter required; unknown keys are errors naming the key).
LoadedCpuCalibration read_cpu_calibration(const config::Node& cpu);
// Reads the `cpu:` section of a calibration file; ConfigError when the file has none.
LoadedCpuCalibration load_cpu_calibration(const std::string& path);

}  // namespace exasim::models
