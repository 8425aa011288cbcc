#include "hw/cpu_device.hpp"

#include "hw/error.hpp"

namespace exasim::hw {

GpuSpec device_from_cpu(const CpuSpec& cpu, const config::Node& where) {
  if (cpu.memory_capacity <= 0) {
    where.fail("CPU " + cpu.name + " does not state its memory capacity, which the KV cache and the training state need",
               "give it, e.g. cpu: {base: " + cpu.name + ", memory_capacity: 512 GiB}");
  }
  GpuSpec d;
  d.name = cpu.name;
  d.vendor = cpu.vendor;
  d.architecture = "cpu";
  d.sm_count = cpu.cores;
  d.base_clock_hz = cpu.base_clock_hz;
  d.boost_clock_hz = cpu.boost_clock_hz > 0 ? cpu.boost_clock_hz : cpu.base_clock_hz;
  // SIMD FMA peak at the base clock; 16-bit types run in fp32 lanes (converted on load, as CPU
  // BLAS without matrix units do), so they share fp32's rate. No fp8/fp4/int8 path is modelled.
  const double fp32 = cpu.peak_fp32_flops();
  d.peak_flops[static_cast<std::size_t>(DType::kFp64)] = fp32 / 2;
  for (DType t : {DType::kFp32, DType::kTf32, DType::kFp16, DType::kBf16}) d.peak_flops[static_cast<std::size_t>(t)] = fp32;
  d.vector_fp32_flops = fp32;
  d.hbm_capacity_bytes = cpu.memory_capacity;
  d.hbm_bandwidth = cpu.memory_bandwidth;
  d.l2_bytes = cpu.l3_bytes;
  d.tdp_w = cpu.tdp_w;
  // Idle socket power when the spec omits it: ~30% of TDP (estimate; server sockets idle at
  // 20-40% of TDP with C-states limited, as SPECpower reports show).
  d.idle_power_w = cpu.idle_power_w > 0 ? cpu.idle_power_w : 0.3 * cpu.tdp_w;
  d.host_cpu = cpu;
  return d;
}

}  // namespace exasim::hw
