#include "workloads/serving/replica_state.hpp"

#include <algorithm>
#include <cassert>

namespace exasim::workloads::serving {

ReplicaState::ReplicaState(KvBlockManager blocks, ReplicaLimits limits)
    : blocks_(std::move(blocks)), limits_(limits) {}

void ReplicaState::set_prefix_keys(Sequence& s) {
  const Request& r = s.req;
  if (!limits_.prefix_caching || r.prefix_blocks.empty() || r.prefix_block_tokens == 0) return;
  if (unit_tokens_ == 0) {  // the first request with prefix information fixes the unit
    unit_tokens_ = r.prefix_block_tokens;
    blocks_.set_unit_blocks(blocks_.blocks_for(unit_tokens_));
  }
  if (r.prefix_block_tokens != unit_tokens_) return;  // a different unit size cannot share blocks
  const std::size_t full = std::min<std::size_t>(r.prefix_blocks.size(),
                                                 static_cast<std::size_t>(r.prompt_tokens / unit_tokens_));
  s.prefix_keys.resize(full);
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < full; ++i) s.prefix_keys[i] = key = chain_prefix_key(key, r.prefix_blocks[i]);
}

SeqId ReplicaState::insert(Sequence s) {
  if (s.prefix_keys.empty() && !s.kv_ready) set_prefix_keys(s);
  SeqId id;
  if (!free_slots_.empty()) {
    id = free_slots_.back();
    free_slots_.pop_back();
    slab_[id] = std::move(s);
  } else {
    id = static_cast<SeqId>(slab_.size());
    slab_.push_back(std::move(s));
  }
  ++live_;
  return id;
}

void ReplicaState::erase(SeqId id) {
  Sequence& s = slab_[id];
  assert(s.own_blocks == 0 && s.shared_units == 0);
  s = Sequence{};
  s.state = SeqState::kDone;
  free_slots_.push_back(id);
  --live_;
}

Admission ReplicaState::plan(SeqId id, std::int64_t reserve_extra) const {
  const Sequence& s = slab_[id];
  Admission a;
  if (!s.prefix_keys.empty() && s.computed == 0 && unit_tokens_ > 0) {
    // Leave at least one token to compute: the prefill must produce the next token's logits.
    const auto usable = std::min<std::int64_t>(static_cast<std::int64_t>(s.prefix_keys.size()),
                                               (s.prefill_target - 1) / unit_tokens_);
    a.hit_units = blocks_.match(s.prefix_keys.data(), usable);
  }
  const std::int64_t hit_tokens = a.hit_units * unit_tokens_;
  a.compute_tokens = s.prefill_target - std::max(s.computed, hit_tokens);
  const std::int64_t own_tokens = s.prefill_target + reserve_extra - hit_tokens;
  a.blocks = blocks_.blocks_for(own_tokens) - s.own_blocks + blocks_.acquire_cost(s.prefix_keys.data(), a.hit_units);
  a.ever_fits = blocks_.blocks_for(s.prefill_target + reserve_extra) <= blocks_.total_blocks() - blocks_.watermark_blocks();
  return a;
}

void ReplicaState::admit(SeqId id, const Admission& a, double now, std::int64_t reserve_extra) {
  Sequence& s = slab_[id];
  blocks_.acquire(s.prefix_keys.data(), a.hit_units);
  s.shared_units = a.hit_units;
  const std::int64_t hit_tokens = a.hit_units * unit_tokens_;
  if (s.first_scheduled_s < 0) {
    s.first_scheduled_s = now;
    s.prefix_hit_tokens = hit_tokens;
  }
  s.computed = std::max(s.computed, hit_tokens);
  const std::int64_t need = blocks_.blocks_for(s.prefill_target + reserve_extra - hit_tokens) - s.own_blocks;
  if (need > 0) {
    blocks_.allocate(need);
    s.own_blocks += need;
  }
  s.state = SeqState::kRunning;
}

bool ReplicaState::grow(SeqId id, std::int64_t tokens) {
  Sequence& s = slab_[id];
  const std::int64_t own_tokens = s.computed + tokens - s.shared_units * unit_tokens_;
  const std::int64_t extra = blocks_.blocks_for(own_tokens) - s.own_blocks;
  if (extra <= 0) return true;
  if (!blocks_.can_allocate(extra, false)) return false;
  blocks_.allocate(extra);
  s.own_blocks += extra;
  return true;
}

void ReplicaState::release_kv(SeqId id) {
  Sequence& s = slab_[id];
  blocks_.release(s.own_blocks);
  s.own_blocks = 0;
  blocks_.release_units(s.prefix_keys.data(), s.shared_units);
  s.shared_units = 0;
}

void ReplicaState::preempt(SeqId id, Batch& batch) {
  Sequence& s = slab_[id];
  ++preemptions_;
  ++s.preemptions;
  ++batch.preempted;
  const std::int64_t host_blocks = blocks_.blocks_for(s.computed);
  const bool swap = limits_.preemption == Preemption::kSwap && s.computed > 0 && !s.prefilling() &&
                    swap_used_blocks_ + host_blocks <= limits_.swap_capacity_blocks;
  release_kv(id);
  if (swap) {
    swap_used_blocks_ += host_blocks;
    s.swapped_blocks = host_blocks;
    batch.swap_out_blocks += host_blocks;
    s.state = SeqState::kSwapped;
    swapped_.push_back(id);
    return;
  }
  s.computed = 0;
  s.prefill_target = s.req.prompt_tokens + s.generated;
  s.state = SeqState::kWaiting;
  waiting_.push_front(id);
}

bool ReplicaState::swap_in(SeqId id, Batch& batch) {
  Sequence& s = slab_[id];
  const std::int64_t need = blocks_.blocks_for(s.computed + limits_.step_tokens);
  if (!blocks_.can_allocate(need, true)) return false;
  blocks_.allocate(need);
  s.own_blocks = need;
  swap_used_blocks_ -= s.swapped_blocks;
  batch.swap_in_blocks += s.swapped_blocks;
  s.swapped_blocks = 0;
  s.state = SeqState::kRunning;
  return true;
}

bool ReplicaState::admit_ready(SeqId id, double now) {
  Sequence& s = slab_[id];
  const std::int64_t need = blocks_.blocks_for(s.computed + limits_.step_tokens);
  if (!blocks_.can_allocate(need, true)) return false;
  blocks_.allocate(need);
  s.own_blocks = need;
  if (s.first_scheduled_s < 0) s.first_scheduled_s = now;
  s.state = SeqState::kRunning;
  return true;
}

void ReplicaState::publish_prefix(SeqId id) {
  Sequence& s = slab_[id];
  const auto units = static_cast<std::int64_t>(s.prefix_keys.size());
  const std::int64_t unit_blocks = blocks_.unit_blocks();
  while (s.shared_units < units && s.computed >= (s.shared_units + 1) * unit_tokens_ && s.own_blocks >= unit_blocks) {
    const std::uint64_t key = s.prefix_keys[static_cast<std::size_t>(s.shared_units)];
    if (!blocks_.publish(key)) {
      // Another sequence cached the same unit meanwhile: share its copy and free ours.
      blocks_.release(unit_blocks);
      blocks_.acquire(&key, 1);
    }
    s.own_blocks -= unit_blocks;
    ++s.shared_units;
  }
}

void ReplicaState::reject(SeqId id) {
  Sequence& s = slab_[id];
  release_kv(id);
  s.state = SeqState::kDone;
  ++rejected_;
  rejected_ids_.push_back(id);
}

}  // namespace exasim::workloads::serving
