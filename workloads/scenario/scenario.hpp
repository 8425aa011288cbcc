#pragma once
// A scenario file (DESIGN.md "Scenario YAML"), read and checked: the cluster, the model, the
// training (or serving) job, simulation settings, calibration and cost.
#include <optional>
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "hw/config/node.hpp"
#include "models/calibration/calibration_file.hpp"
#include "models/cost/cost_model.hpp"
#include "sim/net/network_options.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model/model_spec.hpp"
#include "workloads/reliability/reliability_config.hpp"
#include "workloads/serving/serving_config.hpp"
#include "workloads/training/all_ranks.hpp"
#include "workloads/training/training_config.hpp"

namespace exasim::workloads {

struct SimulationConfig {
  std::string fidelity = "analytical";  // analytical | flow
  std::uint64_t seed = 1;
  bool all_ranks = false;  // every rank simulated (training); default: symmetry
  std::vector<Straggler> stragglers;  // needs all_ranks: GPUs whose kernels run slower (or faster)
  // The network backend and its choices (fidelity, flow_model, collective_algorithm).
  sim::NetworkOptions network;
};

struct Scenario {
  std::string name;
  std::string file;
  config::Node root;  // the tree as read (with overrides), for error locations
  topologies::Cluster cluster;
  std::string gpu_name;
  ModelSpec model;
  std::optional<TrainingConfig> training;
  bool serving = false;  // a serving: section is present
  std::optional<::exasim::workloads::serving::ServingConfig> serving_config;  // read from it (serving_reader.cpp)
  SimulationConfig simulation;
  models::Calibration calibration;
  models::CostRates cost;
  std::optional<reliability::ReliabilityConfig> reliability;  // training: failures, checkpoints, goodput
};

// Reads `path`, applies `overrides` ("a.b.c=value"), resolves catalog names, checks the schema.
// Throws ConfigError / IoError naming file, line and key.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides, const hw::Catalog& catalog);
// The same from an already-loaded tree (validation cases embed scenarios).
Scenario scenario_from_node(const config::Node& root, const hw::Catalog& catalog, const std::string& base_dir);

// Re-throws a PlanError with the file and line of its key in the scenario.
[[noreturn]] void rethrow_located(const PlanError& e, const Scenario& s);

// Readers of the sections, exposed for tests.
topologies::Cluster read_cluster(const config::Node& n, const hw::Catalog& catalog);
// The two halves of read_cluster. The description is cheap; the check builds the whole graph
// once (a 2^20-GPU fat-tree: seconds and gigabytes) to refuse what only the topology tells (a
// torus whose dimensions miss the node count, a fat-tree too small), at `n`'s line. A scenario
// checks its other sections in between, so their mistakes are reported at once at any size.
topologies::Cluster read_cluster_description(const config::Node& n, const hw::Catalog& catalog);
void check_cluster_topology(const topologies::Cluster& c, const config::Node& n);
// A catalog server's host CPUs, host memory and GPU-host PCIe link.
topologies::HostSide read_host_side(const hw::NodeSpec& server, const hw::Catalog& catalog, const config::Node& where);
TrainingConfig read_training(const config::Node& n, int cluster_gpus);
// `cluster_kernel`: the scenario's kernel parameters, used by pools on the cluster's GPU type.
serving::ServingConfig read_serving(const config::Node& n, const hw::Catalog& catalog, const topologies::Cluster& cluster,
                                    const ModelSpec& model, const models::KernelParams& cluster_kernel,
                                    const std::string& base_dir);

}  // namespace exasim::workloads
