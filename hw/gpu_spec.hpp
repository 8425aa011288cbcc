#pragma once
// A GPU as the cost models see it: compute units, per-dtype peak rates, memory hierarchy, power.
// Values come from configs/hw/gpus.yaml, where each number names its source.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "hw/config/node.hpp"
#include "hw/cpu_spec.hpp"
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

  // Cores and memory hierarchy, for the tile-level kernel models (models/kernel/). Optional keys:
  // an inline GPU without them gets the fallback named with each accessor below.
  double base_clock_hz = 0;                             // base_clock
  std::array<double, kAllDTypes.size()> vector_flops{}; // vector: non-matrix FLOP/s per dtype
  double registers_per_sm = 0;      // 32-bit registers
  int max_ctas_per_sm = 0;          // resident thread blocks (workgroups) per SM (CU)
  int max_warps_per_sm = 0;         // resident warps (wavefronts)
  double smem_bandwidth_per_sm = 0; // B/s, shared memory (LDS) of one SM
  double l2_bandwidth = 0;          // B/s, all SMs together reading from L2
  double hbm_latency_s = 0;         // load-to-use latency of an L2 miss to HBM
  double special_functions_per_clock = 0;  // exp2, log2, rsqrt, sin, cos results per clock of one SM
  // Measured maximum achievable matmul FLOP/s per dtype (measured_matmul; 0 = not measured): the
  // rate the best large GEMM reaches on this GPU, which the kernel models scale from
  // (models/kernel/kernel_params.cpp); GPUs without one take their family's.
  std::array<double, kAllDTypes.size()> measured_matmul_flops{};

  // Set when the device is a host CPU socket (a scenario's `cluster.cpu`, hw/cpu_device.hpp): the
  // kernel models then hand every kernel to the CPU models (models/cpu/cpu_kernels.hpp).
  std::optional<CpuSpec> host_cpu;

  double peak(DType t) const { return peak_flops[static_cast<std::size_t>(t)]; }
  double measured_matmul(DType t) const { return measured_matmul_flops[static_cast<std::size_t>(t)]; }
  bool supports(DType t) const { return peak(t) > 0; }

  // Matrix-unit rate one SM reaches in `t` (dense peak / SMs); 0 when the GPU has no path for t.
  double matrix_flops_per_sm(DType t) const { return sm_count > 0 ? peak(t) / sm_count : 0; }
  // Non-matrix rate in `t`; fallback: the fp32 vector rate.
  double vector_rate(DType t) const {
    const double v = vector_flops[static_cast<std::size_t>(t)];
    return v > 0 ? v : vector_fp32_flops;
  }
  // Fallbacks for GPUs described without the hierarchy keys: the CUDA limits of compute
  // capability 8.0/9.0 (64 K registers, 32 CTAs, 64 warps), 128 B/clk of shared memory per SM
  // (32 banks x 4 B), L2 at twice the HBM bandwidth, 500 ns HBM latency (A100 measures 354 ns,
  // H100 288 ns; gpu_specs.yaml): order-of-magnitude values, stated so results stay explainable.
  double registers() const { return registers_per_sm > 0 ? registers_per_sm : 65536; }
  int max_ctas() const { return max_ctas_per_sm > 0 ? max_ctas_per_sm : 32; }
  int max_warps() const { return max_warps_per_sm > 0 ? max_warps_per_sm : 64; }
  double smem_bandwidth() const { return smem_bandwidth_per_sm > 0 ? smem_bandwidth_per_sm : 128 * boost_clock_hz; }
  double l2_read_bandwidth() const { return l2_bandwidth > 0 ? l2_bandwidth : 2 * hbm_bandwidth; }
  double hbm_latency() const { return hbm_latency_s > 0 ? hbm_latency_s : 500e-9; }
  // Special-function (SFU, MUFU) results per second of one SM at the boost clock. Fallback: 16 a
  // clock, every NVIDIA compute capability from 5.0 to 10.0 (CUDA C++ Programming Guide,
  // arithmetic instruction throughput: 32-bit exp2, log2, reciprocal, sin, cos), and CDNA's
  // transcendentals at a quarter of its 64 lanes.
  double special_function_rate_per_sm() const {
    return (special_functions_per_clock > 0 ? special_functions_per_clock : 16) * boost_clock_hz;
  }
};

// Builds a GpuSpec from a catalog entry followed by override layers (see config/fields.hpp).
GpuSpec gpu_from_layers(const std::string& name, const std::vector<config::Node>& layers);

}  // namespace exasim::hw
