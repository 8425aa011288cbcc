#include "workloads/serving/batch_scheduler.hpp"

#include <algorithm>

namespace exasim::workloads::serving {

const std::vector<SchedulerInfo>& batch_schedulers() {
  static const std::vector<SchedulerInfo> table = {
      {"vllm", "vLLM v0 default: prefill-first, whole prompts, paged KV with watermark, preempt latest (chunked_prefill: N = vLLM chunked-prefill mode)",
       [](const ReplicaLimits& l) { return l.chunk_budget > 0 ? make_sarathi_scheduler(l) : make_vllm_scheduler(l); }},
      {"sarathi", "Sarathi-Serve: decode-first, prompts chunked into a per-iteration token budget (chunked_prefill, default 512)",
       make_sarathi_scheduler},
      {"orca", "Orca iteration-level batching: whole prompts join decodes; KV reserved for the whole request, no preemption",
       make_orca_scheduler},
  };
  return table;
}

const SchedulerInfo* find_batch_scheduler(std::string_view name) {
  for (const SchedulerInfo& s : batch_schedulers())
    if (s.name == name) return &s;
  return nullptr;
}

std::string batch_scheduler_names() {
  std::string out;
  for (const SchedulerInfo& s : batch_schedulers()) out += (out.empty() ? "" : " | ") + s.name;
  return out;
}

bool schedule_running(ReplicaState& st, Batch& b, std::int64_t& budget, bool chunk_prefills) {
  std::vector<SeqId>& run = st.running();
  const std::int64_t step = st.limits().step_tokens;
  std::size_t end = run.size();
  std::size_t keep = 0;  // run[0, keep) stay running, in order
  bool preempted = false;
  for (std::size_t pos = 0; pos < end; ++pos) {
    const SeqId id = run[pos];
    if (st.seq(id).prefilling()) {
      run[keep++] = id;
      continue;
    }
    bool ok = true;
    while (!st.grow(id, step)) {
      preempted = true;
      if (end - 1 > pos) {
        st.preempt(run[--end], b);  // the latest arrival gives way (vLLM)
      } else {
        st.preempt(id, b);
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    run[keep++] = id;
    b.items.push_back({id, step, false});
    budget -= step;
  }
  run.resize(keep);
  for (const SeqId id : run) {
    const Sequence& s = st.seq(id);
    if (!s.prefilling()) continue;
    const std::int64_t chunk = chunk_prefills ? std::min(s.remaining_prefill(), budget) : s.remaining_prefill();
    if (chunk <= 0) break;
    b.items.push_back({id, chunk, true});
    budget -= chunk;
  }
  return preempted;
}

void resume_swapped_and_ready(ReplicaState& st, double now, Batch& b) {
  const std::size_t max_seqs = static_cast<std::size_t>(st.limits().max_num_seqs);
  const std::int64_t step = st.limits().step_tokens;
  std::deque<SeqId>& swapped = st.swapped();
  while (!swapped.empty() && st.running().size() < max_seqs) {
    const SeqId id = swapped.front();
    if (!st.swap_in(id, b)) break;
    swapped.pop_front();
    st.running().push_back(id);
    b.items.push_back({id, step, false});
  }
  std::deque<SeqId>& waiting = st.waiting();
  while (!waiting.empty() && st.seq(waiting.front()).kv_ready && st.running().size() < max_seqs) {
    const SeqId id = waiting.front();
    if (!st.admit_ready(id, now)) {
      const KvBlockManager& kv = st.blocks();
      if (kv.blocks_for(st.seq(id).computed + step) <= kv.total_blocks() - kv.watermark_blocks()) break;
      waiting.pop_front();  // larger than this replica's whole cache: it can never decode here
      st.reject(id);
      continue;
    }
    waiting.pop_front();
    st.running().push_back(id);
    b.items.push_back({id, step, false});
  }
}

}  // namespace exasim::workloads::serving
