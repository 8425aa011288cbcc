// Orca (Yu et al., OSDI'22) iteration-level scheduling with selective batching: each iteration
// runs one decode step of every running request plus the prompts of newly admitted ones. A
// request is admitted only when KV for its whole length can be reserved (Orca reserves the
// maximum; here the request's true output length, an upper bound on Orca's batch), so KV never
// runs out mid-request and nothing is preempted. Prompts fill the iteration's token budget
// (max_batch_tokens); the first prompt of an iteration is taken whole even when it overruns the
// budget, so long prompts cannot starve. With `chunked_prefill: N` prompts are instead cut into
// chunks that fill a budget of N tokens (TensorRT-LLM's chunked context).
#include <algorithm>

#include "workloads/serving/batch_scheduler.hpp"

namespace exasim::workloads::serving {

namespace {

class OrcaScheduler final : public BatchScheduler {
 public:
  explicit OrcaScheduler(const ReplicaLimits& l) : limits_(l) {}

  void schedule(ReplicaState& st, double now, Batch& b) override {
    b.clear();
    const bool chunking = limits_.chunk_budget > 0;
    std::int64_t budget = chunking ? limits_.chunk_budget : limits_.max_batch_tokens;
    schedule_running(st, b, budget, chunking);
    resume_swapped_and_ready(st, now, b);
    bool prefill_in_batch = std::any_of(b.items.begin(), b.items.end(), [](const ScheduledWork& w) { return w.prefill; });
    auto& waiting = st.waiting();
    while (!waiting.empty() && st.running().size() < static_cast<std::size_t>(limits_.max_num_seqs)) {
      const SeqId id = waiting.front();
      const Sequence& s = st.seq(id);
      if (s.kv_ready) break;
      const std::int64_t extra = s.req.output_tokens - 1 - s.generated + (limits_.step_tokens - 1);
      const Admission a = st.plan(id, extra);
      if (!a.ever_fits) {
        waiting.pop_front();
        st.reject(id);
        continue;
      }
      if (chunking ? budget <= 0 : (a.compute_tokens > budget && prefill_in_batch)) break;
      if (!st.blocks().can_allocate(a.blocks, false)) break;
      waiting.pop_front();
      st.admit(id, a, now, extra);
      st.running().push_back(id);
      const std::int64_t tokens = chunking ? std::min(a.compute_tokens, budget) : a.compute_tokens;
      b.items.push_back({id, tokens, true});
      budget -= tokens;
      prefill_in_batch = true;
    }
  }

 private:
  ReplicaLimits limits_;
};

}  // namespace

std::unique_ptr<BatchScheduler> make_orca_scheduler(const ReplicaLimits& limits) {
  return std::make_unique<OrcaScheduler>(limits);
}

}  // namespace exasim::workloads::serving
