#pragma once
// A host CPU socket: cores, SIMD, clocks, caches, memory bandwidth, power.
#include <string>
#include <vector>

#include "hw/config/node.hpp"

namespace exasim::hw {

struct CpuSpec {
  std::string name;
  std::string vendor;
  int cores = 0;
  double base_clock_hz = 0;
  double boost_clock_hz = 0;
  int simd_width_bits = 0;
  int fma_units_per_core = 0;
  double memory_bandwidth = 0;  // B/s per socket
  int memory_channels = 0;
  double l3_bytes = 0;
  double tdp_w = 0;
  double idle_power_w = 0;       // 0: not stated (a device view takes a fraction of TDP)
  double memory_capacity = 0;    // B of DRAM attached to the socket; 0: not stated (depends on the DIMMs)

  // fp32 FLOP/s at base clock: cores x FMA units x lanes x 2.
  double peak_fp32_flops() const {
    return cores * fma_units_per_core * (simd_width_bits / 32.0) * 2.0 * base_clock_hz;
  }
};

CpuSpec cpu_from_layers(const std::string& name, const std::vector<config::Node>& layers);

}  // namespace exasim::hw
