#pragma once
// Memory per GPU of a candidate in closed form, the same accounting as training_memory() (model
// states by ZeRO stage, Korthikanti activations times the passes in flight, logits on the last
// stage) without building a TrainingPlan or walking the schedule: in-flight passes come from
// the schedules' warm-up formulas. tests/planner checks it against training_memory().
#include <algorithm>

#include "workloads/model/model_spec.hpp"
#include "workloads/planner/plan_space.hpp"
#include "workloads/training/training_config.hpp"

namespace exasim::workloads::planner {

struct MemoryEstimate {
  double peak_bytes = 0;  // the stage with the most
  int peak_stage = 0;
  double weights = 0, gradients = 0, optimizer = 0, activations = 0;  // of the peak stage
  double host_bytes = 0;    // with offload: the most host memory a GPU's offloaded states take (offload_host_bytes)
};

// What the estimate needs of the model, computed once. A stage's weights are counted layer by
// layer (a mixture of experts' leading dense layers, then its routed ones: stage_weights()); the
// per-layer means size one layer's gradient bucket and weight gather.
struct ModelNumbers {
  int layers = 0;
  double embed_params = 0, head_params = 0;
  double tied_copy_params = 0;  // vocab x hidden when the embedding is tied (kept on the last stage)
  double hidden = 0, vocab = 0;
  bool moe = false;
  // Exact per layer: a mixture of experts' leading dense layers, then its routed ones.
  int dense_leading = 0;          // layers [0, dense_leading) are dense (all of a dense model)
  double dense_layer = 0;         // a dense layer, split by TP
  double routed_base = 0;         // a routed layer's attention and norms, split by TP
  double routed_whole = 0;        // a routed layer's router and shared experts, on every TP rank
  double routed_experts = 0;      // a routed layer's routed experts, split by EP x ETP
  ModelSpec model;                // for what depends on more of its shape (LoRA's adapters)
  static ModelNumbers of(const ModelSpec& m);
  // Layers [first, first + count) on one GPU: the dense part, and the routed experts.
  double range_dense(int first, int count, int tp) const;
  double range_experts(int first, int count, int ep, int etp) const;
  // One GPU's share of a mean layer: the dense part (ZeRO-sharded over its dp x cp weight
  // replicas) and the routed experts (over its tp x cp x dp / (ep etp) expert replicas).
  double dense_per_gpu(int tp) const { return range_dense(0, layers, tp) / layers; }
  double experts_per_gpu(int ep, int etp = 1) const { return range_experts(0, layers, ep, etp) / layers; }
};

// The GPUs that hold the same dense weights (ZeRO shards over them): dp x cp.
inline int weight_replicas(const Candidate& c) { return c.dp * c.cp; }
// The GPUs that hold the same routed-expert slices: tp x cp x dp / (ep x etp).
inline int expert_replicas(const Candidate& c) { return std::max(1, c.tp * c.cp * c.dp / std::max(1, c.ep * c.etp)); }
// Hybrid sharding (TrainingConfig::shard_group; 0: none), as TrainingPlan lays it out: the weight
// replicas a dense state is sharded over, the copies they form, and the experts' replicas of one copy.
inline int shard_size(const Candidate& c, int shard_group) { return shard_group > 0 ? shard_group : weight_replicas(c); }
inline int shard_copies(const Candidate& c, int shard_group) { return std::max(1, weight_replicas(c) / shard_size(c, shard_group)); }
inline int expert_shard_size(const Candidate& c, int shard_group) {
  return std::max(1, expert_replicas(c) / shard_copies(c, shard_group));
}

// Passes whose activations stage `stage` holds at its peak (in_flight_chunks() in closed form).
int in_flight_passes(const std::string& schedule, int stage, int pp, int micro_batches, int chunks);
// Layers of virtual stage v of pp x vpp, even or with lighter ends.
int virtual_stage_layers(const Candidate& c, int layers, int v);
// Pipeline rank `stage`'s share of the layers' weights on one GPU (its chunks' layer ranges).
struct StageWeights {
  int layers = 0, widest_chunk = 0;
  double dense = 0, experts = 0;
  double widest_sharded_layer = 0;  // ZeRO-3: the widest layer's parameters that are sharded, per GPU
  double widest_layer = 0;          // the widest layer's parameters on one GPU (offload: its gradient bucket)
};
StageWeights stage_weights(const ModelNumbers& m, const Candidate& c, int stage, int shard_group = 0);

// act_layer: activation bytes of one layer and micro-batch (layer_activation_bytes()); under block
// recompute (c.recompute_layers > 0) of a recomputed layer, and act_kept of the others of a chunk.
MemoryEstimate estimate_memory(const ModelNumbers& m, const TrainingConfig& base, const Candidate& c, double act_layer,
                               double act_kept = 0);

}  // namespace exasim::workloads::planner
