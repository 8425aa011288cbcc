// vLLM v0's default scheduler (vllm/core/scheduler.py, _schedule_default): when nothing is
// swapped out, waiting prompts are admitted first, whole, up to the token and sequence limits and
// while the free blocks stay above the watermark; an iteration with prefills runs only prefills.
// Otherwise the running sequences decode (preempting the latest when blocks run out), and if
// nothing was preempted, swapped sequences come back.
#include <limits>

#include "workloads/serving/batch_scheduler.hpp"

namespace exasim::workloads::serving {

namespace {

class VllmScheduler final : public BatchScheduler {
 public:
  explicit VllmScheduler(const ReplicaLimits& l) : limits_(l) {}

  void schedule(ReplicaState& st, double now, Batch& b) override {
    b.clear();
    if (st.swapped().empty()) schedule_prefills(st, now, b);
    if (!b.items.empty()) return;
    std::int64_t budget = std::numeric_limits<std::int64_t>::max();
    if (!schedule_running(st, b, budget, false)) resume_swapped_and_ready(st, now, b);
  }

 private:
  void schedule_prefills(ReplicaState& st, double now, Batch& b) const {
    std::int64_t tokens = 0;
    auto& waiting = st.waiting();
    while (!waiting.empty()) {
      const SeqId id = waiting.front();
      if (st.seq(id).kv_ready) break;
      if (st.running().size() >= static_cast<std::size_t>(limits_.max_num_seqs)) break;
      const Admission a = st.plan(id);
      if (!a.ever_fits) {
        waiting.pop_front();
        st.reject(id);
        continue;
      }
      // A prompt longer than the budget still runs, alone (vLLM requires the budget to cover
      // the model's context; traces can exceed a small budget).
      if (tokens > 0 && tokens + a.compute_tokens > limits_.max_batch_tokens) break;
      if (!st.blocks().can_allocate(a.blocks, true)) break;
      waiting.pop_front();
      st.admit(id, a, now);
      st.running().push_back(id);
      b.items.push_back({id, a.compute_tokens, true});
      tokens += a.compute_tokens;
    }
  }

  ReplicaLimits limits_;
};

}  // namespace

std::unique_ptr<BatchScheduler> make_vllm_scheduler(const ReplicaLimits& limits) {
  return std::make_unique<VllmScheduler>(limits);
}

}  // namespace exasim::workloads::serving
