#pragma once
// Wall-clock timing of CPU work: warm-up, an inner loop long enough for the clock's resolution, and
// the min/median/max over repeats. The minimum is the least disturbed sample on a shared machine.
#include <functional>
#include <vector>

#include "hw/profile/profile.hpp"

namespace exasim::bench {

struct TimingPlan {
  int repeats = 7;             // samples per case at least
  int max_repeats = 21;        // Rounds: more samples for cases whose two fastest still disagree
  double settle = 0.03;        // ... by more than this fraction
  double budget_s = 10;        // Rounds: no further rounds once this much time has gone by
  double min_sample_s = 2e-3;  // each sample runs the call often enough to last at least this long
  int warmups = 1;             // untimed calls first (page faults, caches, thread start-up)
  // Untimed calls before each sample, to put back into the caches what the cases timed in between
  // evicted. One is not enough where the last-level cache resists scans (Intel's L3 since Ivy
  // Bridge inserts a newly read line where it is evicted first unless it is read again): a 64 MiB
  // matrix-vector product on a Xeon VM of 2026-12-07 (L3 480 MiB) took 4.7 ms right after a
  // 128 MiB one, 4.0 ms after one untimed call, 2.75-2.84 ms after two or three, 2.56 ms in a loop.
  int rewarms = 3;
  // Time by the calling thread's CPU clock instead of the wall clock: for work on one thread it is
  // the same when the machine is idle, and leaves out the time other processes held the core.
  bool thread_clock = false;
};

struct Timed {
  hw::TimeStats per_call;  // seconds per call of `call`
  int repeats = 0;
};

// Times `call` per the plan; calls per sample are chosen from the warm-up's duration.
Timed time_call(const std::function<void()>& call, const TimingPlan& plan);

// Cases timed in interleaved rounds: each round takes one sample of every case, so a burst of
// load from other processes spreads thinly over all cases instead of ruining a few, and the
// minimum of each case comes from whichever round was quiet for it. After `repeats` rounds, cases
// whose two fastest samples differ by more than `settle` get more rounds (up to max_repeats and
// the time budget): a minimum seen twice is the machine's, not a lucky or unlucky moment's.
class Rounds {
 public:
  // `one_thread`: the call runs on the calling thread only, so it is timed by its CPU clock.
  void add(std::function<void()> call, bool one_thread) {
    calls_.push_back(std::move(call));
    one_thread_.push_back(one_thread);
  }
  // One result per case, in the order added.
  std::vector<Timed> run(const TimingPlan& plan) const;

 private:
  std::vector<std::function<void()>> calls_;
  std::vector<bool> one_thread_;
};

// min/median/max of samples (median of an even count: the mean of the middle two).
hw::TimeStats stats_of(std::vector<double> samples);

// The plan for `quick` or full runs, scaled for calls that are long (GEMM) or short (STREAM in L1).
TimingPlan plan_for(bool quick);

}  // namespace exasim::bench
