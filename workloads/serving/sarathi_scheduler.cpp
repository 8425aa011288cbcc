// Sarathi-Serve (Agrawal et al., OSDI'24) stall-free batching, as vLLM's chunked-prefill mode
// implements it: every iteration has a token budget; running decodes go first (one token each),
// then the chunks of prompts already being prefilled, then new prompts, each cut to what is left
// of the budget. Blocks for a whole prompt are taken when it is admitted (vLLM v0).
#include <algorithm>

#include "workloads/serving/batch_scheduler.hpp"

namespace exasim::workloads::serving {

namespace {

class SarathiScheduler final : public BatchScheduler {
 public:
  explicit SarathiScheduler(const ReplicaLimits& l) : limits_(l) {}

  void schedule(ReplicaState& st, double now, Batch& b) override {
    b.clear();
    std::int64_t budget = limits_.chunk_budget;
    if (!schedule_running(st, b, budget, true)) resume_swapped_and_ready(st, now, b);
    auto& waiting = st.waiting();
    while (budget > 0 && !waiting.empty() && st.running().size() < static_cast<std::size_t>(limits_.max_num_seqs)) {
      const SeqId id = waiting.front();
      if (st.seq(id).kv_ready) break;
      const Admission a = st.plan(id);
      if (!a.ever_fits) {
        waiting.pop_front();
        st.reject(id);
        continue;
      }
      if (!st.blocks().can_allocate(a.blocks, true)) break;
      waiting.pop_front();
      st.admit(id, a, now);
      st.running().push_back(id);
      const std::int64_t chunk = std::min(a.compute_tokens, budget);
      b.items.push_back({id, chunk, true});
      budget -= chunk;
    }
  }

 private:
  ReplicaLimits limits_;
};

}  // namespace

std::unique_ptr<BatchScheduler> make_sarathi_scheduler(const ReplicaLimits& limits) {
  ReplicaLimits l = limits;
  if (l.chunk_budget <= 0) l.chunk_budget = 512;  // Sarathi-Serve's budget for strict TBT SLOs (paper Sec. 5)
  return std::make_unique<SarathiScheduler>(l);
}

}  // namespace exasim::workloads::serving
