#pragma once
// A training job checked for runnability, with what follows from it: micro-batches per
// iteration, layers per pipeline stage, and where each rank sits (Megatron's order: TP fastest,
// then CP, DP, PP).
#include <cstdint>
#include <vector>

#include "workloads/model/model_spec.hpp"
#include "workloads/training/training_config.hpp"

namespace exasim::workloads {

class TrainingPlan {
 public:
  // Throws PlanError (key = the scenario key at fault) when the plan cannot run: TP not dividing
  // heads, layers not dividing over stages, batch not dividing, GPU count mismatch, ...
  TrainingPlan(ModelSpec model, TrainingConfig config, int cluster_gpus, int gpus_per_node);

  const ModelSpec& model() const { return model_; }
  const TrainingConfig& config() const { return config_; }
  const Parallelism& par() const { return config_.parallelism; }
  int micro_batches() const { return micro_batches_; }      // per pipeline, per iteration
  int chunks() const { return config_.parallelism.vpp; }  // model chunks per pipeline rank
  // Layers of model chunk `chunk` on pipeline rank `stage` (virtual stage chunk * pp + stage), the
  // index of its first layer, and all layers a rank holds. Splits are even unless the training
  // config gives first_stage_layers / last_stage_layers (Megatron-Core's uneven split, used by
  // Llama 3 405B: 126 layers on 16 stages, 7 on the first and last).
  int layers_in(int stage, int chunk) const { return virtual_layers_[virtual_stage(stage, chunk)]; }
  int first_layer(int stage, int chunk) const { return virtual_first_[virtual_stage(stage, chunk)]; }
  int layers_on_stage(int stage) const;
  int layers_per_stage() const { return layers_on_stage(0); }  // of an even split
  double tokens_per_iteration() const { return double(config_.global_batch) * config_.seq_len; }

  std::uint32_t rank(int tp, int cp, int dp, int pp) const;
  std::vector<std::uint32_t> tp_group(int stage) const;  // of dp = 0, cp = 0
  // The ranks that hold the same weights: dp x cp of them (context-parallel ranks see different
  // tokens of the same sequences, so they reduce gradients and shard optimizer states together,
  // as Megatron-Core's data-parallel-with-CP group does). Of tp = 0.
  std::vector<std::uint32_t> dp_group(int stage) const;
  int weight_replicas() const { return par().dp * par().cp; }
  // Hybrid sharding (TrainingConfig::shard_group): the states are sharded over shard_size() of the
  // weight replicas (consecutive members of dp_group) and replicated over shard_replicas() groups.
  int shard_size() const { return config_.shard_group > 0 ? config_.shard_group : weight_replicas(); }
  int shard_replicas() const { return weight_replicas() / shard_size(); }
  std::vector<std::uint32_t> shard_group(int stage) const;    // of the first group
  std::vector<std::uint32_t> replica_group(int stage) const;  // first members of every group
  std::vector<std::uint32_t> cp_group(int stage) const;  // of tp = 0, dp = 0
  // Mixture of experts, Megatron-Core's parallel folding: the tp*cp*dp ranks of a stage are
  // regrouped for the routed experts as etp (fastest) x ep x expert-dp. The etp ranks that split
  // each expert's MLP, the ep ranks that split the experts (all-to-all), and the ranks that hold
  // the same expert slices (their gradients are reduced together): tp*cp*dp/(ep*etp) of them.
  std::vector<std::uint32_t> etp_group(int stage) const;
  std::vector<std::uint32_t> ep_group(int stage) const;
  std::vector<std::uint32_t> expert_dp_group(int stage) const;
  int expert_replicas() const { return par().tp * par().cp * par().dp / (par().ep * par().etp); }
  // Hybrid sharding with experts (torchtitan's HSDP with EP): the expert replicas split into the
  // same shard_replicas() copies as the dense weights; the experts' states are sharded over the
  // expert_shard_size() replicas of one copy (consecutive members of expert_dp_group). Without
  // hybrid sharding: all of them.
  int expert_shard_size() const { return expert_replicas() / shard_replicas(); }
  std::vector<std::uint32_t> expert_shard_group(int stage) const;    // of the first copy
  std::vector<std::uint32_t> expert_replica_group(int stage) const;  // first members of every copy

 private:
  int virtual_stage(int stage, int chunk) const { return chunk * config_.parallelism.pp + stage; }
  void split_layers();

  ModelSpec model_;
  TrainingConfig config_;
  int micro_batches_ = 0;
  std::vector<int> virtual_layers_, virtual_first_;  // per virtual stage
};

}  // namespace exasim::workloads
