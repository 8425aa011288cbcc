#pragma once
// A job's interruption rate, checkpoint and restart costs from its parts: the failure rates of the
// devices it holds, the checkpoint its model and optimizer make, and the storage it goes to.
// Costs the scenario states directly are kept as stated.
#include <map>
#include <string>

#include "topologies/cluster.hpp"
#include "workloads/model/model_spec.hpp"
#include "workloads/reliability/reliability_config.hpp"
#include "workloads/training/training_config.hpp"

namespace exasim::workloads::reliability {

struct JobCosts {
  double job_mtbf_s = 0;
  std::map<std::string, double> interruptions_per_day;  // by component, when from failure rates
  double checkpoint_bytes = 0;   // the whole checkpoint (0 when its write time was given)
  double checkpoint_write_s = 0;  // what a checkpoint stalls the training (async: the copy to host memory)
  std::string checkpoint_bound;   // what bounds the write: storage, node, pcie; "given"
  double checkpoint_upload_s = 0; // async: from host memory to storage, overlapping training; 0: sync
  double checkpoint_load_s = 0;  // part of the restart
  double restart_s = 0;
};

// Model weights (16-bit) and Adam's states (fp32 master weights, moments) of every parameter, once:
// a distributed checkpoint writes each shard from one rank (models/memory/model_state_memory.hpp's
// bytes per parameter). Throws PlanError for LoRA (its checkpoint is the adapters: give write_time).
double checkpoint_bytes(const ModelSpec& model, const TrainingConfig& training);

// The data-parallel replicas an elastic job can drop one by one: each must hold whole model states
// (no ZeRO sharding, no experts spread over the replicas) and there must be two. 0 when it cannot,
// with the reason.
struct ElasticReplicas {
  int replicas = 0;
  std::string why_not;
};
ElasticReplicas elastic_replicas(const TrainingConfig& plan);

// Throws PlanError (key reliability.*) where a part cannot be computed.
JobCosts job_costs(const ReliabilityConfig& c, const topologies::Cluster& cluster, const ModelSpec& model,
                   const TrainingConfig& training);

}  // namespace exasim::workloads::reliability
