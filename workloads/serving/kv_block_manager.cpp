#include "workloads/serving/kv_block_manager.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace exasim::workloads::serving {

KvBlockManager::KvBlockManager(std::int64_t total_blocks, int block_tokens, double watermark, std::int64_t unit_blocks)
    : total_(std::max<std::int64_t>(0, total_blocks)),
      block_tokens_(std::max(1, block_tokens)),
      unit_blocks_(std::max<std::int64_t>(1, unit_blocks)),
      watermark_blocks_(static_cast<std::int64_t>(std::ceil(watermark * static_cast<double>(total_)))) {}

void KvBlockManager::set_sliding_window(double full_fraction, std::int64_t window) {
  assert(used_blocks() == 0 && units_.empty());
  full_fraction_ = std::clamp(full_fraction, 0.0, 1.0);
  window_ = std::max<std::int64_t>(0, window);
}

std::int64_t KvBlockManager::windowed_blocks_for(std::int64_t tokens) const {
  const double t = static_cast<double>(tokens);
  const double kept = std::min(t, static_cast<double>(window_ + block_tokens_ - 1));
  const double layer_tokens = full_fraction_ * t + (1 - full_fraction_) * kept;
  return static_cast<std::int64_t>(std::ceil(layer_tokens / block_tokens_));
}

void KvBlockManager::set_unit_blocks(std::int64_t blocks) {
  assert(units_.empty());
  unit_blocks_ = std::max<std::int64_t>(1, blocks);
}

bool KvBlockManager::can_allocate(std::int64_t blocks, bool keep_watermark) const {
  const std::int64_t keep = keep_watermark ? watermark_blocks_ : 0;
  return available_blocks() - blocks >= keep;
}

void KvBlockManager::evict_for(std::int64_t blocks) {
  std::int64_t free_now = total_ - used_blocks() - cached_blocks();
  while (free_now < blocks && !lru_.empty()) {
    units_.erase(lru_.front());
    lru_.pop_front();
    free_now += unit_blocks_;
  }
}

void KvBlockManager::note_peak() { peak_used_ = std::max(peak_used_, used_blocks()); }

void KvBlockManager::allocate(std::int64_t blocks) {
  assert(can_allocate(blocks, false));
  evict_for(blocks);
  own_ += blocks;
  note_peak();
}

void KvBlockManager::release(std::int64_t blocks) {
  own_ -= blocks;
  assert(own_ >= 0);
}

std::int64_t KvBlockManager::match(const std::uint64_t* keys, std::int64_t n) const {
  std::int64_t i = 0;
  while (i < n && units_.contains(keys[i])) ++i;
  return i;
}

std::int64_t KvBlockManager::acquire_cost(const std::uint64_t* keys, std::int64_t n) const {
  std::int64_t blocks = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto it = units_.find(keys[i]);
    if (it != units_.end() && it->second.refs == 0) blocks += unit_blocks_;
  }
  return blocks;
}

void KvBlockManager::acquire(const std::uint64_t* keys, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    Unit& u = units_.at(keys[i]);
    if (u.refs++ == 0) {
      lru_.erase(u.lru);
      ++units_in_use_;
    }
  }
  note_peak();
}

void KvBlockManager::release_units(const std::uint64_t* keys, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    Unit& u = units_.at(keys[i]);
    assert(u.refs > 0);
    if (--u.refs == 0) {
      u.lru = lru_.insert(lru_.end(), keys[i]);
      --units_in_use_;
    }
  }
}

bool KvBlockManager::publish(std::uint64_t key) {
  if (units_.contains(key)) return false;
  assert(own_ >= unit_blocks_);
  Unit u;
  u.refs = 1;
  units_.emplace(key, u);
  own_ -= unit_blocks_;
  ++units_in_use_;
  return true;
}

std::uint64_t chain_prefix_key(std::uint64_t previous, std::uint64_t unit_hash) {
  // splitmix64 of the pair: a fixed, portable mix (std::hash is implementation-defined).
  std::uint64_t z = previous * 0x9E3779B97F4A7C15ull + unit_hash + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace exasim::workloads::serving
