#pragma once
// Batching schedulers: what a replica runs in its next iteration. One interface, three policies
// in a name -> factory table (`serving.scheduler`):
//   vllm     vLLM v0 default: prefill-first; whole prompts in prefill-only iterations, decode
//            iterations otherwise; paged KV with a watermark; preempts the latest request when
//            blocks run out. With `chunked_prefill: N` it is vLLM's chunked-prefill mode (= sarathi
//            with budget N).
//   sarathi  Sarathi-Serve (OSDI'24): decode-first stall-free batching; prompts are cut into
//            chunks that fill a per-iteration token budget, mixed with the decodes.
//   orca     Orca (OSDI'22) iteration-level batching: prompts join running decodes in the same
//            iteration; KV is reserved for the whole request at admission, so nothing is ever
//            preempted (an oracle reservation: the request's true output length). TensorRT-LLM's
//            in-flight batching with its GUARANTEED_NO_EVICT capacity scheduler works this way.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/serving/replica_state.hpp"

namespace exasim::workloads::serving {

class BatchScheduler {
 public:
  virtual ~BatchScheduler() = default;
  // Picks the next iteration's work at time `now`; may admit, preempt and swap sequences and
  // moves them between the state's queues. Leaves `batch` without items when there is no work.
  virtual void schedule(ReplicaState& state, double now, Batch& batch) = 0;
};

struct SchedulerInfo {
  std::string name;
  std::string help;
  std::function<std::unique_ptr<BatchScheduler>(const ReplicaLimits&)> make;
};

const std::vector<SchedulerInfo>& batch_schedulers();
const SchedulerInfo* find_batch_scheduler(std::string_view name);
std::string batch_scheduler_names();  // "vllm | sarathi | orca"

// Pieces the policies share (batch_scheduler.cpp).
// Decode steps of the running sequences in order (first come, first served), growing their KV;
// when blocks run out the latest running sequence is preempted. With `chunk_budget` >= 0 the
// running sequences that are still prefilling get chunks from that budget afterwards.
// Returns whether anything was preempted.
bool schedule_running(ReplicaState& state, Batch& batch, std::int64_t& chunk_budget, bool chunk_prefills);
// Brings swapped sequences back, then admits waiting sequences that arrived with their KV,
// while blocks (above the watermark) and the sequence limit allow.
void resume_swapped_and_ready(ReplicaState& state, double now, Batch& batch);

// The policies (one file each).
std::unique_ptr<BatchScheduler> make_vllm_scheduler(const ReplicaLimits& limits);
std::unique_ptr<BatchScheduler> make_sarathi_scheduler(const ReplicaLimits& limits);
std::unique_ptr<BatchScheduler> make_orca_scheduler(const ReplicaLimits& limits);

}  // namespace exasim::workloads::serving
