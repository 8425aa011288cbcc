#pragma once
// What a plan search and a plan evaluation read from a scenario: the model, the scenario's
// training job (batch, sequence, precision and kernel options; its parallel plan is one
// candidate among many), the cluster, calibrated model parameters, network choices, prices and
// power settings, plus the network switch ports the cluster's topology has (for switch power).
#include "models/calibration/calibration_file.hpp"
#include "models/cost/cost_model.hpp"
#include "models/power/power_config.hpp"
#include "sim/net/network_options.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model/model_spec.hpp"
#include "workloads/planner/plan_space.hpp"
#include "workloads/reliability/job_reliability.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/all_ranks.hpp"
#include "workloads/training/training_config.hpp"

namespace exasim::workloads::planner {

struct PlannerInputs {
  Scenario scenario;  // as loaded (names, root for error locations)
  ModelSpec model;
  TrainingConfig base;
  topologies::Cluster cluster;
  models::Calibration calibration;
  sim::NetworkOptions network;
  RankSimulation ranks;  // symmetry, or every rank (simulation.all_ranks, stragglers); searches use symmetry
  models::CostRates cost;
  models::PowerConfig power;
  PlanSpace space;
  double switch_port_gbps = 0;  // sum of the network switches' port speeds (topology)
  // The scenario's reliability: section, costed (the same for every plan of the cluster: its devices,
  // its model's checkpoint, its storage).
  std::optional<reliability::JobCosts> reliability;

  // From a training scenario; reads `plan_space:` and `power:`. Throws ConfigError, and PlanError
  // where the reliability section's costs cannot be computed.
  static PlannerInputs from(const Scenario& s);
};

// Sum over network switch ports of their speed in Gb/s (0 for a single node).
double switch_port_gbps(const topologies::Cluster& cluster);

}  // namespace exasim::workloads::planner
