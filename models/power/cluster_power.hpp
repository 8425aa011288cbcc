#pragma once
// Power of a whole cluster: its GPUs, the rest of each server (CPUs, memory, NICs, node
// switches, fans, storage: the catalog's power_other per node), the network switches, and the
// facility overhead (PUE). And a POLCA-style what-if (Patel et al., "POLCA: Power
// Oversubscription in LLM Cloud Providers", 2024): under a facility power budget, how many
// servers fit when each GPU is provisioned at its cap instead of its TDP.

namespace exasim::models {

// Network switch power: ~0.03 W per Gb/s of port speed (estimate from datasheet typical power:
// NVIDIA Quantum QM8700 ~250 W for 40 x 200 Gb/s, Quantum-2 QM9700 ~750 W for 64 x 400 Gb/s).
inline constexpr double kSwitchWattsPerGbps = 0.03;

struct ClusterPowerInputs {
  int gpus = 0;
  int nodes = 0;
  double gpu_avg_w = 0;          // average power of one GPU over the run
  double node_other_w = 0;       // per node, besides GPUs
  double switch_port_gbps = 0;   // sum over the network switches' ports in use of the port speed, Gb/s
  double pue = 1;
};

struct ClusterPower {
  double gpus_w = 0;
  double nodes_other_w = 0;
  double switches_w = 0;
  double it_w = 0;        // gpus + nodes_other + switches
  double facility_w = 0;  // it x PUE
};

ClusterPower cluster_power(const ClusterPowerInputs& in);

// Provisioned (worst-case) power of one server: GPUs at their cap (or TDP) plus the rest,
// times PUE, plus its share of the network switches.
struct ServerProvision {
  int gpus_per_node = 8;
  double gpu_limit_w = 0;      // cap, or TDP when uncapped
  double node_other_w = 0;
  double switch_share_w = 0;   // switches / nodes
  double pue = 1;
  double facility_w() const { return (gpus_per_node * gpu_limit_w + node_other_w + switch_share_w) * pue; }
};

// Whole servers that fit a facility power budget (W).
int servers_within_budget(double budget_w, const ServerProvision& server);

}  // namespace exasim::models
