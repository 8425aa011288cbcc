// The engine's event queue: both implementations (radix heap for monotone runs, binary heap
// otherwise) take events in (time, seq) order, checked against a sort of everything pushed, on
// random schedules with many equal times, as a discrete-event loop produces them.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include "sim/event_queue.hpp"

using namespace exasim::sim;

namespace {

bool earlier(const Event& a, const Event& b) { return a.time < b.time || (a.time == b.time && a.seq < b.seq); }

// A DES-like workload: pop the earliest, push 0-2 events at or after it (durations from a small
// set, so that times tie often), until `total` events went through. Returns the pop order.
std::vector<Event> drive(EventQueue& q, std::uint32_t total, std::uint32_t seed, std::vector<Event>* pushed) {
  std::mt19937 rng(seed);
  const double durations[] = {0.0, 0.25, 0.5, 1.0, 1e-9, 3.0};
  std::uint32_t seq = 0;
  auto push = [&](Time t) {
    const Event e{t, seq, seq};
    ++seq;
    q.push(e);
    pushed->push_back(e);
  };
  for (int i = 0; i < 50; ++i) push(durations[rng() % 6]);
  std::vector<Event> popped;
  while (!q.empty()) {
    const Event e = q.pop();
    popped.push_back(e);
    if (seq >= total) continue;
    const int children = static_cast<int>(rng() % 3);
    for (int c = 0; c < children; ++c) push(e.time + durations[rng() % 6]);
  }
  return popped;
}

}  // namespace

TEST_CASE("event queue: radix and binary heaps pop in (time, seq) order, ties in scheduling order") {
  for (const bool monotone : {true, false}) {
    for (std::uint32_t seed = 1; seed <= 5; ++seed) {
      EventQueue q(monotone);
      std::vector<Event> pushed;
      const std::vector<Event> popped = drive(q, 20000, seed, &pushed);
      // Every event comes out once; the order is that of a stable sort by time (seq ascending).
      REQUIRE(popped.size() == pushed.size());
      CHECK(std::is_sorted(popped.begin(), popped.end(), earlier));
      std::vector<Event> expected = pushed;
      std::sort(expected.begin(), expected.end(), earlier);
      bool same = true;
      for (std::size_t i = 0; i < expected.size(); ++i) same = same && expected[i].seq == popped[i].seq;
      CHECK(same);
    }
  }
}

TEST_CASE("event queue: the radix heap keeps order across refills, -0.0 counts as 0, and an early push is refused") {
  EventQueue q(true);
  q.push({2.0, 0, 0});
  q.push({-0.0, 1, 1});  // as 0: first out, not last (its sign bit would sort it after 2.0)
  q.push({1.0, 2, 2});
  q.push({1.0, 3, 3});
  CHECK(q.pop().seq == 1);
  CHECK(q.pop().seq == 2);
  q.push({1.0, 4, 4});  // at the last time taken: after the equal ones already queued
  CHECK(q.pop().seq == 3);
  CHECK(q.pop().seq == 4);
  CHECK_THROWS_AS(q.push({0.5, 5, 5}), std::logic_error);
  CHECK(q.size() == 1);
  CHECK(q.pop().seq == 0);
  CHECK(q.empty());
}

TEST_CASE("event queue: the binary heap peeks the earliest time and takes earlier pushes") {
  EventQueue q(false);
  q.push({3.0, 0, 0});
  q.push({1.0, 1, 1});
  CHECK(q.top_time() == 1.0);
  CHECK(q.pop().seq == 1);
  q.push({0.5, 2, 2});  // earlier than the last pop: fine here (a network backend moved the clock)
  CHECK(q.top_time() == 0.5);
  CHECK(q.pop().seq == 2);
  CHECK(q.pop().seq == 0);
}
