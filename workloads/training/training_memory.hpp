#pragma once
// Memory per GPU of a training plan, stage by stage: model states by ZeRO stage (ZeRO paper),
// activations by Korthikanti et al. times the micro-batches a schedule keeps in flight, ZeRO-3's
// gathered layers, NCCL's communication buffers and the allocator's fragmentation (stated
// estimates below).
#include <vector>

#include "workloads/training/training_plan.hpp"

namespace exasim::workloads {

struct StageMemory {
  double parameters = 0;  // parameters held by one GPU of this stage before ZeRO sharding
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double gathered = 0;       // ZeRO-3: whole layers gathered from their shards (sharded_layer_bytes)
  double buffers = 0;        // NCCL's buffers of the communicators the GPU belongs to
  double fragmentation = 0;  // the caching allocator's reserved-but-unused share
  int in_flight = 0;      // micro-batches whose activations are held at the peak
  double total() const { return weights + gradients + optimizer + activations + gathered + buffers + fragmentation; }
};

struct MemoryReport {
  std::vector<StageMemory> stages;
  int peak_stage = 0;
  const StageMemory& peak() const { return stages[peak_stage]; }
};

// Model-chunk passes whose activations pipeline rank `stage` holds at its peak under the plan's
// schedule, and the same in micro-batches (rounded up) for reports.
int in_flight_chunks(const TrainingPlan& plan, int stage);
int in_flight_micro_batches(const TrainingPlan& plan, int stage);
// Parameters one GPU of `stage` holds before ZeRO sharding: its layers split by TP, plus the
// embedding on the first stage and the LM head on the last.
double stage_parameter_count(const TrainingPlan& plan, int stage);
// The same split by who shares them: `dense` with the GPU's dp x cp replicas, `expert` (its
// experts / ep routed experts of mixture-of-experts layers) with its expert-data-parallel ones.
struct SharedParameters {
  double dense = 0, expert = 0;
  double total() const { return dense + expert; }
};
SharedParameters layer_parameters(const TrainingPlan& plan, int layer);
// ZeRO-3: the parts of `layer` sharded over their replicas (dense weights where dp x cp > 1,
// routed experts where they have replicas; with LoRA the frozen weights and the adapters, as
// FSDP shards both); nothing below ZeRO-3. What each forward and backward gathers.
SharedParameters sharded_layer_parameters(const TrainingPlan& plan, int layer);
// ZeRO-3: the parts of `layer` whose gradients each backward reduces over their replicas
// (reduce-scattered where sharded, then, with hybrid sharding, all-reduced across the copies): all
// that train (LoRA: the adapters).
SharedParameters sharded_layer_gradients(const TrainingPlan& plan, int layer);
SharedParameters stage_parameters(const TrainingPlan& plan, int stage);
// What a stage holds besides its layers: the embedding (first stage), the final norm and LM head
// and, with tied embeddings under pipelining, the embedding's copy (last stage).
SharedParameters stage_outer_parameters(const TrainingPlan& plan, int stage);
// The parameters that train (have gradients and optimizer states): all of them, or with LoRA only
// the adapters of the targeted linear layers (A: in x rank, replicated over TP for a column-parallel
// layer and split with its input for a row-parallel one; B: rank x out, split or replicated the
// other way round, as NeMo's ParallelLinearAdapter). Frozen: everything else.
SharedParameters layer_trainable_parameters(const TrainingPlan& plan, int layer);
double lora_layer_parameters(const ModelSpec& model, const LoraConfig& lora, int tp);  // per GPU
SharedParameters stage_trainable_parameters(const TrainingPlan& plan, int stage);
// Activation bytes of one transformer layer and one micro-batch on one GPU (the plan-free form
// serves the planner's estimate).
double layer_activation_bytes(const ModelSpec& model, const TrainingConfig& config);
double layer_activation_bytes(const TrainingPlan& plan);
MemoryReport training_memory(const TrainingPlan& plan);

// ZeRO-3 (FSDP) keeps whole only what it is computing with: the 16-bit weights of the layer being
// computed and of the one prefetched (two layers, as PyTorch FSDP's per-block wrap with backward
// prefetch and exasim's lowering gather them), and in a backward that layer's 16-bit gradients
// until they are reduce-scattered. `layer_params` is the widest such layer on the GPU (the parts
// that are sharded: dense weights over their replicas, routed experts over theirs) and
// `gradient_params` the part of it that trains (all of it; LoRA: the adapters); the weights part
// is dropped where they are offloaded (counted in the offloaded weights), the gradients part
// where gradients stream to the host (counted there). The ZeRO paper's 16 Psi / N_d counts model
// states only; DeepSpeed gathers module by module (up to stage3_max_live_parameters), holding less.
double sharded_layer_bytes(double layer_params, double gradient_params, bool weights_offloaded, bool gradients_offloaded);

// NCCL's buffers: each communicator a GPU uses holds send and receive buffers on each of its
// channels: 2 x 8 channels x 4 MiB (NCCL_BUFFSIZE's default, Simple protocol) = 64 MiB (estimate:
// 8 channels is what NCCL opens on 8-GPU NVSwitch nodes; it allocates per connection, so this is
// the order, not the byte). Communicators: TP, pipeline peers, data-parallel (two with hybrid
// sharding), CP, and for MoE models EP, ETP and expert data-parallel, each when it has > 1 GPU.
constexpr double kNcclBytesPerCommunicator = 2.0 * 8 * 4 * 1048576;
double communication_buffer_bytes(const Parallelism& p, int weight_shard_groups, bool moe);
// The PyTorch caching allocator keeps freed blocks for reuse; with activations allocated and
// freed every micro-batch, reserved memory runs a few percent above what is allocated. Stated
// factor (estimate): 5% of the memory allocated during the step (activations and buffers).
constexpr double kAllocatorFragmentation = 0.05;

}  // namespace exasim::workloads
