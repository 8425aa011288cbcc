#pragma once
// Internal to the training lowering (training_graph.cpp builds the passes and the pipeline,
// training_gradient_sync.cpp the gradient reduction, optimizer step and offload): the state one
// lowering of a plan carries. Not part of the public interface (training_graph.hpp is).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "workloads/training/pipeline_schedule.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/transformer_ops.hpp"

namespace exasim::workloads::lowering {

// A run of kernels between two communication points, costed once and instantiated many times.
struct Segment {
  bool is_comm = false;
  bool is_host = false;  // host work beside the kernel before it (time = its duration)
  bool beside = false;  // comm that always runs beside the kernel before it (the CP ring, async backward TP)
  bool tensor_group = false;    // a TP collective: beside its kernels under tp_comm_overlap
  bool feeds_next = false;      // a userbuffers all-gather: beside the GEMM after it (its consumer)
  bool pipelined = false;       // starts with a GEMM that userbuffers split into chunks
  std::string label;
  double time = 0, flops = 0, bytes = 0;  // compute
  std::uint32_t comm_op = sim::kNone;     // comm
};

class Lowering {
 public:
  Lowering(const TrainingPlan& plan, const KernelContext& kernels) : plan_(plan), k_(kernels) {}
  TrainingGraph run();

 private:
  // The segments of one model chunk (all of a rank's layers without interleaving).
  struct ChunkSegments {
    std::vector<std::vector<Segment>> fwd, bwd, rec;  // per layer of the chunk
    std::vector<std::vector<Segment>> wgt;            // weight gradients, when the schedule splits them off
    std::vector<Segment> embed_fwd, embed_bwd, head_fwd, head_bwd;
  };
  // A pipeline position: rank and model chunk. Virtual stage = chunk * pp + rank.
  struct Place {
    int stage = 0, chunk = 0;
  };
  struct Pass {
    sim::TaskId first = sim::kNone, last = sim::kNone;
  };

  std::vector<Segment> segments(const std::vector<Op>& ops, const std::string& prefix, int stage);
  std::uint32_t comm(sim::CommKind kind, double bytes, std::vector<std::uint32_t> ranks,
                     CommIssuer issuer = CommIssuer::kNccl);
  sim::TaskId emit(const std::vector<Segment>& segs, int stage, std::uint16_t category, Pass& pass);
  Pass emit_pass(int stage, const PipelineStep& step);
  // What a layer's pass does with its ZeRO-3 sharded weights: gather them first (a forward, or a
  // recompute that the backward then reuses), reduce-scatter the gradients after, or both.
  enum class Shards { kNone, kGather, kReduce, kGatherAndReduce };
  void emit_layer(const std::vector<Segment>& segs, int stage, int layer, std::uint16_t category, Pass& pass, Shards shards);
  void reduce_layer_gradients(int stage, const SharedParameters& params, const Pass& pass);
  // Which of a stage's data-parallel groups: all ranks holding the same weights (dp x cp), one
  // hybrid-sharding group of them, the groups' first members (their replicas), or the ranks
  // holding the same routed experts.
  // Groups of a data-parallel collective: all weight replicas, hybrid sharding's shard group and
  // replica copies; the experts' replicas, their shard group and copies.
  enum class Over { kAll, kShard, kReplicas, kExperts, kExpertShard, kExpertReplicas };
  sim::TaskId dp_collective(int stage, sim::StreamId stream, sim::CommKind kind, double bytes, std::string_view label,
                            Over group = Over::kAll);
  // A kernel of the optimizer side (gradient norm, Adam step) on the stage's compute stream.
  sim::TaskId optimizer_kernel(int stage, std::string_view label, const models::KernelCost& cost);
  // Gradients of `params` parameters reduced as sharding wants: all-reduce without sharding,
  // reduce-scatter over the shard group and then, with hybrid sharding, an all-reduce of the
  // shard over the replicas. Returns the last task (kNone when nothing needs reducing).
  // With `experts`, the routed experts' gradients over their replicas, the same way.
  sim::TaskId reduce_gradients(int stage, double params, sim::TaskId after, const std::string& label, bool experts = false);
  void emit_p2p(Place from, Place to, bool forward, int micro_batch);
  std::optional<Place> neighbour(Place p, bool forward) const;
  void emit_gradient_sync(int stage);
  sim::TaskId emit_offloaded_step(int stage, const std::vector<sim::TaskId>& reductions,
                                  const std::vector<double>& reduced_owned, sim::TaskId norm_done, double owned);
  void add_stage(int stage);
  void build_stage_segments(int stage);

  const TrainingPlan& plan_;
  const KernelContext& k_;
  TrainingGraph out_;
  std::map<std::tuple<int, double, std::vector<std::uint32_t>, int>, std::uint32_t> comm_index_;
  std::vector<std::vector<ChunkSegments>> seg_;                  // [stage][chunk]
  std::map<std::tuple<bool, int, int, int>, Pass> passes_;       // (forward, stage, chunk, micro-batch)
  std::vector<std::map<int, sim::TaskId>> layer_grad_ready_;     // [stage]: layer -> its last backward task
  std::vector<sim::TaskId> last_backward_;                   // [stage]: its last gradient task
  bool split_weight_ = false;                                // weight gradients in passes of their own
  std::vector<sim::TaskId> gather_gate_;                     // [stage]: the end of the layer before the one whose weights are gathered last
  std::vector<sim::TaskId> last_kernel_;                     // [stage]: the latest segment emitted on its compute stream
  std::vector<std::vector<bool>> weights_gathered_;          // [stage][chunk]: its first forward has emitted the overlapped gathers
  std::vector<std::vector<sim::TaskId>> pending_gathers_;    // [stage]: overlapped gathers the next layer waits for
  std::vector<std::vector<sim::TaskId>> sharded_reductions_; // [stage]: ZeRO-3 per-micro-batch reduce-scatters
  std::vector<std::vector<double>> sharded_owned_;           // [stage]: of each, the parameters this GPU owns after it
  double pcie_rate() const;                                  // B/s of a pinned host copy; throws without a host
  // ZeRO-1/2 with the weights' all-gather in the next forward (TrainingConfig::overlap_param_gather).
  bool overlaps_param_gather() const {
    const TrainingConfig& c = plan_.config();
    return c.overlap_param_gather && c.zero >= 1 && c.zero <= 2;
  }
  // The overlapped all-gather of layer `layer`'s updated weights (plus `extra` parameters of the
  // stage's embedding / head; layer -1: those alone), queued from the start of the step, then the
  // layer, which waits for it.
  void emit_gathered_layer(const std::vector<Segment>& segs, int stage, int layer, double extra, Pass& pass);
  bool offloads_params() const { return plan_.config().offload == "params-cpu" || plan_.config().offload == "nvme"; }
  double param_fetch_rate() const;                           // B/s: PCIe, or this GPU's share of the NVMe drives
  bool has_host_work() const {
    return k_.overheads.micro_batch_s > 0 || k_.overheads.iteration_s > 0 ||
           (k_.overheads.expert_dispatch_s > 0 && plan_.model().moe.has_value());
  }
  // The host's share of dispatching a pass (half a micro-batch's overhead), which the pass waits
  // for; added before the pass, so that it precedes the pass's own host work on the host stream.
  sim::TaskId emit_host_dispatch(int stage);
};

}  // namespace exasim::workloads::lowering
