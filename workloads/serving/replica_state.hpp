#pragma once
// The queues and KV cache of one replica, and the moves every batching scheduler makes on them:
// admit a waiting prompt (prefix-cache lookup, block allocation), grow a running sequence's KV,
// preempt by recompute or swap, swap back in. Schedulers (batch_scheduler.hpp) decide the order.
#include <cstdint>
#include <deque>
#include <vector>

#include "workloads/serving/kv_block_manager.hpp"
#include "workloads/serving/sequence.hpp"
#include "workloads/serving/serving_config.hpp"

namespace exasim::workloads::serving {

struct ReplicaLimits {
  int max_batch_tokens = 8192;
  int max_num_seqs = 256;
  int chunk_budget = 0;          // token budget of a chunked-prefill iteration; 0 = whole prompts
  int step_tokens = 1;           // KV slots a decode step appends (k + 1 with speculative decoding)
  Preemption preemption = Preemption::kRecompute;
  std::int64_t swap_capacity_blocks = 0;
  bool prefix_caching = false;
};

// One scheduled piece of work: a prefill chunk of `tokens`, or a decode step (tokens = step_tokens).
struct ScheduledWork {
  SeqId seq = 0;
  std::int64_t tokens = 0;
  bool prefill = false;
};

struct Batch {
  std::vector<ScheduledWork> items;
  std::int64_t swap_out_blocks = 0;
  std::int64_t swap_in_blocks = 0;
  int preempted = 0;
  void clear() { items.clear(); swap_out_blocks = swap_in_blocks = 0; preempted = 0; }
};

// What admitting a waiting sequence takes now.
struct Admission {
  std::int64_t hit_units = 0;       // prefix units found in the cache
  std::int64_t compute_tokens = 0;  // prompt tokens left to compute
  std::int64_t blocks = 0;          // blocks it takes from the available pool
  bool ever_fits = true;            // false: larger than the whole cache
};

class ReplicaState {
 public:
  ReplicaState(KvBlockManager blocks, ReplicaLimits limits);

  Sequence& seq(SeqId id) { return slab_[id]; }
  const Sequence& seq(SeqId id) const { return slab_[id]; }
  std::deque<SeqId>& waiting() { return waiting_; }
  std::vector<SeqId>& running() { return running_; }
  std::deque<SeqId>& swapped() { return swapped_; }
  const std::deque<SeqId>& waiting() const { return waiting_; }
  const std::vector<SeqId>& running() const { return running_; }
  const std::deque<SeqId>& swapped() const { return swapped_; }
  KvBlockManager& blocks() { return blocks_; }
  const KvBlockManager& blocks() const { return blocks_; }
  const ReplicaLimits& limits() const { return limits_; }
  std::int64_t prefix_unit_tokens() const { return unit_tokens_; }

  SeqId insert(Sequence s);  // stores a sequence (state as given); returns its id
  void erase(SeqId id);      // frees the slot (KV must be released)
  std::size_t live() const { return live_; }

  // Admission of waiting sequence `id` holding `reserve_extra` more tokens than its prefill
  // (Orca reserves the whole output up front).
  Admission plan(SeqId id, std::int64_t reserve_extra = 0) const;
  void admit(SeqId id, const Admission& a, double now, std::int64_t reserve_extra = 0);
  // Makes room for `tokens` more KV tokens of running sequence `id`; false if blocks run out.
  bool grow(SeqId id, std::int64_t tokens);
  // Takes `id` off the GPU: swap to host if asked and there is host room, else recompute later.
  // The caller removes it from running; recompute puts it at the front of waiting.
  void preempt(SeqId id, Batch& batch);
  // Brings swapped sequence `id` back (blocks for its KV and one step); false if no room.
  bool swap_in(SeqId id, Batch& batch);
  // Admits a sequence that arrived with its prompt's KV (disaggregated decode).
  bool admit_ready(SeqId id, double now);
  void release_kv(SeqId id);  // frees all its blocks and prefix units
  // After a prefill completes: shares its full prefix units through the prefix cache.
  void publish_prefix(SeqId id);

  // Drops waiting sequence `id` (already popped from waiting) that can never fit the KV cache.
  void reject(SeqId id);
  std::vector<SeqId>& rejected_ids() { return rejected_ids_; }  // drained by the replica
  std::int64_t rejected() const { return rejected_; }
  void count_rejected_arrival() { ++rejected_; }  // turned away before it was stored
  std::int64_t preemptions() const { return preemptions_; }

 private:
  void set_prefix_keys(Sequence& s);

  KvBlockManager blocks_;
  ReplicaLimits limits_;
  std::vector<Sequence> slab_;
  std::vector<SeqId> free_slots_;
  std::size_t live_ = 0;
  std::deque<SeqId> waiting_;
  std::vector<SeqId> running_;
  std::deque<SeqId> swapped_;
  std::int64_t swap_used_blocks_ = 0;
  std::int64_t unit_tokens_ = 0;  // prefix unit size, fixed by the first request that has one
  std::int64_t rejected_ = 0;
  std::vector<SeqId> rejected_ids_;
  std::int64_t preemptions_ = 0;
};

}  // namespace exasim::workloads::serving
