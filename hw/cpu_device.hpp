#pragma once
// A host CPU socket seen as the device a scenario serves or trains on: the GpuSpec fields that
// the memory, power and cluster code read (capacity, bandwidth, peak rates, power) come from the
// CPU's spec, and `host_cpu` tells the kernel models to use the CPU models.
#include "hw/cpu_spec.hpp"
#include "hw/gpu_spec.hpp"

namespace exasim::hw {

// Throws ConfigError (naming `where`) when the CPU does not state its memory capacity: it is a
// property of the server's DIMMs, not of the CPU, so the scenario must give it.
GpuSpec device_from_cpu(const CpuSpec& cpu, const config::Node& where);

}  // namespace exasim::hw
