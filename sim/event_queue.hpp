#pragma once
// The engine's pending task completions, taken earliest first: by time, then by the order they
// were scheduled (seq), so that equal inputs give equal outputs bit for bit.
//
// Two implementations behind one interface, with the same pop order:
// - a binary heap, for runs whose clock another component can move (a link-sharing network
//   backend finishes ops between the engine's events, so the engine must peek without popping);
// - a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest path
//   problem", JACM 1990), for runs where the engine alone keeps time. A discrete-event engine
//   never schedules before the completion it is processing, the monotone case a radix heap
//   needs. Keys are the times' IEEE bit patterns (non-negative doubles order as their bits);
//   bucket i holds the events whose key first differs from the last popped key at bit i - 1.
//   Each event moves to a lower bucket at most 64 times, and the buckets are appended and read
//   in order: no log-n sift through a heap spread over memory, which with every rank simulated
//   (tens of thousands of streams running at once) was a cache miss per level.
//   Equal times leave in scheduling order: a bucket is only ever redistributed into empty lower
//   buckets, keeping its order, and later pushes carry larger seqs.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/exec_graph.hpp"

namespace exasim::sim {

struct Event {
  Time time;
  std::uint32_t seq;
  TaskId task;
};

class EventQueue {
 public:
  // monotone: pushes are never earlier than the last pop (the radix heap); else a binary heap.
  explicit EventQueue(bool monotone) : radix_(monotone) {}

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push(const Event& e) {
    if (!radix_) {
      heap_.push_back(e);
      std::push_heap(heap_.begin(), heap_.end(), later);
    } else {
      const std::uint64_t k = key(e.time);
      if (k < last_) throw std::logic_error("EventQueue: an event scheduled before the last one taken");
      buckets_[bucket_of(k)].push_back(e);
    }
    ++size_;
  }

  // The earliest event's time (the queue must not be empty). Only for the binary heap.
  Time top_time() const { return heap_.front().time; }

  // Removes and returns the earliest event (the queue must not be empty).
  Event pop() {
    --size_;
    if (!radix_) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      const Event top = heap_.back();
      heap_.pop_back();
      return top;
    }
    if (head_ == buckets_[0].size()) refill();
    return buckets_[0][head_++];
  }

 private:
  // + 0.0 turns -0.0 (whose sign bit would sort it last) into +0.0.
  static std::uint64_t key(Time t) { return std::bit_cast<std::uint64_t>(t + 0.0); }
  std::size_t bucket_of(std::uint64_t k) const { return static_cast<std::size_t>(std::bit_width(k ^ last_)); }

  // Bucket 0 is used up: the lowest non-empty bucket's smallest key becomes the last key, and
  // its events move down (those with that key to bucket 0, in their order).
  void refill() {
    buckets_[0].clear();
    head_ = 0;
    std::size_t i = 1;
    while (buckets_[i].empty()) ++i;
    std::vector<Event>& b = buckets_[i];
    std::uint64_t least = key(b.front().time);
    for (const Event& e : b) least = std::min(least, key(e.time));
    last_ = least;
    for (const Event& e : b) buckets_[bucket_of(key(e.time))].push_back(e);
    b.clear();
  }

  // "a after b": std::push_heap / pop_heap build max-heaps, so this order makes a min-heap.
  static bool later(const Event& a, const Event& b) {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  }

  bool radix_;
  std::size_t size_ = 0;
  std::vector<Event> heap_;
  std::array<std::vector<Event>, 65> buckets_;
  std::size_t head_ = 0;     // next event of bucket 0
  std::uint64_t last_ = 0;   // key of the last refill (every queued key is at least this)
};

}  // namespace exasim::sim
