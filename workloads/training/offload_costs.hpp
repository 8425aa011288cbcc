#pragma once
// What ZeRO-Offload and ZeRO-Infinity cost a GPU, from the host side of its node (the training
// lowering and the planner's closed form both read these):
//   copies between a GPU and its host run at ~80% of the PCIe link (pinned cudaMemcpy: ~25 of
//   31.5 GB/s on Gen4, ~50 of 63 GB/s on Gen5, as nvbandwidth reports on DGX systems);
//   ZeRO-Infinity on NVMe fetches parameters at this GPU's share of the node's drives;
//   the host's Adam step is memory-bound on the sockets' DRAM, which the node's GPUs share.
#include <string>

#include "topologies/cluster.hpp"

namespace exasim::workloads {

// B/s of a pinned copy between one GPU and its host.
double host_copy_rate(const topologies::HostSide& host);
// B/s at which one GPU fetches offloaded parameters: PCIe, or its share of the NVMe drives
// (offload "nvme"; the drives' rates must be stated).
double param_fetch_rate(const topologies::HostSide& host, const std::string& offload);
// Seconds of the host's Adam step over `owned` parameters per GPU, all the node's GPUs at once:
// read the fp32 gradient, master weight and both moments (16 B), write master, moments and the
// 16-bit copy (14 B), 12 FLOPs; on NVMe the states also stream to and from the drives, in chunks
// that overlap the update: the slowest of the three sets the time.
double host_optimizer_time(const topologies::HostSide& host, const std::string& offload, double owned);
// Host memory per owned parameter: fp32 master weight, moments and gradient (16 B); ZeRO-Infinity
// on the CPU also the 16-bit parameters (18 B); on NVMe only the fp32 gradients stay (4 B).
double offload_host_bytes_per_param(const std::string& offload);
// Host memory of one GPU's offloaded states: `owned` trainable parameters at the rate above, and
// with LoRA under ZeRO-Infinity on the CPU the GPU's shard of the frozen 16-bit weights (2 B each).
double offload_host_bytes(const std::string& offload, double owned, double frozen_owned);

}  // namespace exasim::workloads
