#pragma once
// How often a cluster's parts interrupt a synchronous training job: unexpected interruptions per
// device-hour, by component, each counted per the device that carries it (a GPU, a node, a
// scale-out NIC). configs/hw/failures.yaml holds measured sets with their source.
#include <string>
#include <vector>

#include "hw/config/node.hpp"

namespace exasim::hw {

struct FailureRatesSpec {
  std::string name;
  // Per GPU-hour.
  double gpu = 0;       // the GPU itself: faulty GPU, on-chip SRAM, GPU system processor, thermal, silent data corruption
  double hbm = 0;       // its HBM
  double software = 0;  // software bugs, collective-library timeouts, dependencies (one process per GPU)
  // Per node-hour.
  double nvlink = 0;    // NVLink / NVSwitch
  double host = 0;      // CPUs, host memory, SSDs, power, chassis, unplanned host maintenance
  // Per scale-out NIC-hour.
  double nic = 0;       // the NIC
  double network = 0;   // switches and cables (per NIC link into the fabric)
  std::string source;
};

FailureRatesSpec failure_rates_from_layers(const std::string& name, const std::vector<config::Node>& layers);

}  // namespace exasim::hw
