#include "workloads/training/offload_costs.hpp"

#include <algorithm>
#include <limits>

#include "models/cpu/cpu_gemm_model.hpp"
#include "models/cpu/cpu_memory_model.hpp"

namespace exasim::workloads {

double host_copy_rate(const topologies::HostSide& host) { return 0.8 * host.pcie_bandwidth; }

double param_fetch_rate(const topologies::HostSide& host, const std::string& offload) {
  const double pcie = host_copy_rate(host);
  if (offload != "nvme") return pcie;
  return std::min(pcie, host.nvme_read / host.gpus_per_node);  // the node's GPUs fetch at once
}

double host_optimizer_time(const topologies::HostSide& host, const std::string& offload, double owned) {
  const models::CpuParams cpu = models::CpuParams::defaults_for(host.cpu);
  const double per_socket = owned * host.gpus_per_node / host.cpus_per_node;
  const double ws = std::numeric_limits<double>::max() / 4;  // far beyond any cache
  const double stream = models::cpu_stream_time(cpu, 16 * per_socket, 14 * per_socket, ws, host.cpu.cores);
  const double compute = 12 * per_socket / models::cpu_peak_flops(host.cpu, DType::kFp32, host.cpu.cores);
  double drives = 0;
  if (offload == "nvme") {  // fp32 master weights and moments (12 B) and 16-bit parameters (2 B)
    const double per_node = 14 * owned * host.gpus_per_node;
    drives = std::max(per_node / host.nvme_read, per_node / host.nvme_write);
  }
  return std::max({stream, compute, drives});
}

double offload_host_bytes_per_param(const std::string& offload) {
  return offload == "params-cpu" ? 18 : offload == "nvme" ? 4 : 16;
}

double offload_host_bytes(const std::string& offload, double owned, double frozen_owned) {
  return offload_host_bytes_per_param(offload) * owned + (offload == "params-cpu" ? 2 * frozen_owned : 0);
}

}  // namespace exasim::workloads
