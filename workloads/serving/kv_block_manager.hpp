#pragma once
// The paged KV cache of one replica (vLLM's block manager): the KV memory is cut into blocks of
// `block_tokens` tokens; a sequence holds ceil(tokens / block_tokens) blocks of its own. With
// prefix caching, full prefix units of the prompt (a unit = the source's prefix block, e.g. 512
// tokens = 32 blocks) are kept under a chained hash key and shared by every sequence with the
// same prefix; units nobody holds stay cached until an allocation needs their blocks, least
// recently released first (LRU).
#include <cstdint>
#include <list>
#include <unordered_map>

namespace exasim::workloads::serving {

class KvBlockManager {
 public:
  // watermark: share of all blocks kept free when admitting new prompts (vLLM 0.01).
  KvBlockManager(std::int64_t total_blocks, int block_tokens, double watermark, std::int64_t unit_blocks = 1);

  std::int64_t total_blocks() const { return total_; }
  int block_tokens() const { return block_tokens_; }
  std::int64_t unit_blocks() const { return unit_blocks_; }
  // Sets the prefix-unit size; only while no unit is cached.
  void set_unit_blocks(std::int64_t blocks);
  // Blocks held by sequences: their own, plus shared prefix units in use.
  std::int64_t used_blocks() const { return own_ + units_in_use_ * unit_blocks_; }
  // Blocks of cached prefix units that nobody holds (evictable).
  std::int64_t cached_blocks() const { return static_cast<std::int64_t>(lru_.size()) * unit_blocks_; }
  std::int64_t available_blocks() const { return total_ - used_blocks(); }
  std::int64_t watermark_blocks() const { return watermark_blocks_; }
  std::int64_t peak_used_blocks() const { return peak_used_; }
  std::int64_t blocks_for(std::int64_t tokens) const {
    if (window_ == 0) return (tokens + block_tokens_ - 1) / block_tokens_;
    return windowed_blocks_for(tokens);
  }
  // Sliding-window layers free the blocks that left their window (vLLM's hybrid KV cache
  // manager, TensorRT-LLM's variable sliding-window cache): a sequence of t tokens then holds the
  // blocks of full_fraction x t + (1 - full_fraction) x min(t, window + block_tokens - 1) tokens of
  // every layer (a window straddles one block more). Only before anything is allocated.
  void set_sliding_window(double full_fraction, std::int64_t window);

  // Whether `blocks` more can be allocated now (evicting cached units if needed), keeping the
  // watermark free when `keep_watermark`.
  bool can_allocate(std::int64_t blocks, bool keep_watermark) const;
  void allocate(std::int64_t blocks);  // precondition: can_allocate(blocks, false)
  void release(std::int64_t blocks);

  // Prefix cache. `keys` are the chained keys of a prompt's full prefix units.
  std::int64_t match(const std::uint64_t* keys, std::int64_t n) const;  // leading units cached
  // Takes a reference on the first n units (all cached). Units that were evictable become used,
  // so the caller must have checked can_allocate(blocks of those units).
  void acquire(const std::uint64_t* keys, std::int64_t n);
  // Blocks that acquire(keys, n) would take from the available pool.
  std::int64_t acquire_cost(const std::uint64_t* keys, std::int64_t n) const;
  void release_units(const std::uint64_t* keys, std::int64_t n);
  // Turns unit_blocks of the caller's own blocks into the cached unit `key`, held by the caller.
  // Returns false (nothing changes) when the key is already cached.
  bool publish(std::uint64_t key);
  std::int64_t cached_units() const { return static_cast<std::int64_t>(units_.size()); }

 private:
  struct Unit {
    std::int64_t refs = 0;
    std::list<std::uint64_t>::iterator lru;  // valid when refs == 0
  };
  void evict_for(std::int64_t blocks);
  void note_peak();
  std::int64_t windowed_blocks_for(std::int64_t tokens) const;

  std::int64_t total_;
  int block_tokens_;
  std::int64_t unit_blocks_;
  std::int64_t watermark_blocks_;
  std::int64_t own_ = 0;
  std::int64_t units_in_use_ = 0;
  std::int64_t peak_used_ = 0;
  double full_fraction_ = 1;
  std::int64_t window_ = 0;  // 0: every layer keeps the whole context
  std::unordered_map<std::uint64_t, Unit> units_;
  std::list<std::uint64_t> lru_;  // front: released longest ago
};

// Chained key of prefix unit i: equal keys mean equal prefixes up to and including unit i.
std::uint64_t chain_prefix_key(std::uint64_t previous, std::uint64_t unit_hash);

}  // namespace exasim::workloads::serving
