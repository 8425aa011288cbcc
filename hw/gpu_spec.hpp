#pragma once
// A GPU as the cost models see it: compute units, per-dtype peak rates, memory hierarchy, power.
// Values come from configs/hw/gpus.yaml, where each number names its source.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "hw/config/node.hpp"
#include "hw/dtype.hpp"

namespace exasim::hw {

struct GpuSpec {
  std::string name;
  std::string vendor;        // nvidia | amd
  std::string architecture;  // ampere | hopper | blackwell | cdna2 | cdna3
  int sm_count = 0;          // SMs (NVIDIA) or CUs (AMD)
  double boost_clock_hz = 0;
  std::array<double, kAllDTypes.size()> peak_flops{};  // dense FLOP/s per dtype; 0 = unsupported
  double vector_fp32_flops = 0;    // non-matrix FP32 FLOP/s
  double hbm_capacity_bytes = 0;
  double hbm_bandwidth = 0;        // B/s
  double l2_bytes = 0;
  double smem_per_sm_bytes = 0;
  double tdp_w = 0;
  double idle_power_w = 0;
  double scaleup_bandwidth = 0;    // NVLink/xGMI B/s per direction per GPU
  std::string pcie;                // link catalog name
  std::string node_fabric;         // fabric catalog name used when a scenario omits intra_node

  double peak(DType t) const { return peak_flops[static_cast<std::size_t>(t)]; }
  bool supports(DType t) const { return peak(t) > 0; }
};

// Builds a GpuSpec from a catalog entry followed by override layers (see config/fields.hpp).
GpuSpec gpu_from_layers(const std::string& name, const std::vector<config::Node>& layers);

}  // namespace exasim::hw
