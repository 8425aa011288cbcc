#pragma once
// One model replica (tp x pp GPUs) serving requests iteration by iteration: its scheduler picks
// a batch, the cost model prices it, and when the iteration ends the batch's tokens come out.
// In a prefill pool a sequence leaves after its prompt (its first token) for a decode replica;
// in a decode pool sequences arrive with their prompt's KV.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workloads/serving/batch_scheduler.hpp"
#include "workloads/serving/iteration_cost.hpp"
#include "workloads/serving/replica_state.hpp"

namespace exasim::workloads::serving {

class ServingMetrics;

struct ReplicaSetup {
  int index = 0;
  PoolRole role = PoolRole::kMixed;
  std::string scheduler = "vllm";
  ReplicaLimits limits;
  std::int64_t kv_blocks = 0;
  int block_tokens = 16;
  double watermark = 0.01;
  double kv_bytes_per_token_per_gpu = 0;  // for swap traffic
  const SpeculativeConfig* speculative = nullptr;
  // Sliding-window layers' blocks freed outside the window (KvBlockManager::set_sliding_window):
  // the share of layers with full attention and the window; kv_window 0: none.
  double kv_full_layer_fraction = 1;
  std::int64_t kv_window = 0;
};

struct ReplicaStats {
  std::int64_t iterations = 0;
  double busy_s = 0;
  double kv_utilization_time = 0;  // integral of used/total blocks over busy time
  double kv_peak_utilization = 0;
  std::int64_t prefill_tokens = 0;
  std::int64_t decode_tokens = 0;
  // Where the busy time went (IterationTime parts summed over iterations) and the decode batch:
  // explains a throughput figure (weights-, KV- or compute-bound; batch limited by KV capacity).
  double linear_s = 0, attention_s = 0, cpu_s = 0;
  double decode_seq_iterations = 0;  // sum over iterations of the decoding sequences
};

class Replica {
 public:
  Replica(ReplicaSetup setup, IterationCostModel cost, ServingMetrics* metrics);

  int index() const { return setup_.index; }
  PoolRole role() const { return setup_.role; }
  bool busy() const { return busy_; }

  void add(Request r);           // a new request waits for its prefill
  void add_prefilled(Sequence s);  // arrives with its prompt's KV (decode pool)

  // Schedules the next iteration at `now`; returns its duration, or nullopt when there is no work.
  std::optional<double> start_iteration(double now);
  // Ends the running iteration at `now`: tokens come out; finished sequences go to finished(),
  // sequences whose prompt is done in a prefill pool go to handoffs().
  void finish_iteration(double now);

  std::vector<Sequence>& finished() { return finished_; }
  std::vector<SeqId>& handoffs() { return handoffs_; }
  const Sequence& seq(SeqId id) const { return state_.seq(id); }
  // A handed-off sequence reached its decode replica: free its KV here.
  void release(SeqId id);

  std::int64_t outstanding() const { return static_cast<std::int64_t>(state_.live()); }
  std::int64_t prefix_match_tokens(const Request& r) const;
  const ReplicaStats& stats() const { return stats_; }
  const ReplicaState& state() const { return state_; }
  const IterationCostModel& cost_model() const { return cost_; }
  std::int64_t preemptions() const { return state_.preemptions(); }
  std::int64_t rejected() const { return state_.rejected(); }

 private:
  Sequence fresh(Request r) const;
  void build_shape();
  void emit(Sequence& s, double now, std::int64_t tokens);
  void complete(SeqId id);

  ReplicaSetup setup_;
  IterationCostModel cost_;
  ServingMetrics* metrics_;
  ReplicaState state_;
  std::unique_ptr<BatchScheduler> scheduler_;
  Batch batch_;
  BatchShape shape_;
  bool busy_ = false;
  double iteration_start_ = 0;
  double spec_tokens_per_step_ = 1;
  std::vector<Sequence> finished_;
  std::vector<SeqId> handoffs_;
  std::vector<SeqId> done_scratch_;
  ReplicaStats stats_;
};

}  // namespace exasim::workloads::serving
