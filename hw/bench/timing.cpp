#include "hw/bench/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

namespace exasim::bench {

namespace {

double now_s() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Warm-up calls, then the number of calls per sample that makes one sample last min_sample_s
// (steady_clock resolves ~20 ns, but a sample should also average over OpenMP fork/join jitter).
long warm_up(const std::function<void()>& call, const TimingPlan& plan) {
  double shortest = 1e30;
  for (int i = 0; i < std::max(1, plan.warmups); ++i) {
    const double t0 = now_s();
    call();
    shortest = std::min(shortest, now_s() - t0);
  }
  const double per_call = std::max(shortest, 1e-9);
  return std::clamp(static_cast<long>(std::ceil(plan.min_sample_s / per_call)), 1L, 10'000'000L);
}

// Seconds per call over `calls` calls; a sample that runs 5x longer than planned (the machine is
// busy) stops early, so one slow phase cannot stretch a quick run into minutes.
// The untimed calls first (TimingPlan::rewarms) put the case's data back into the caches that the
// other cases of a round used in between, as a loop that runs the call over and over finds it.
double sample(const std::function<void()>& call, long calls, const TimingPlan& plan, bool thread_clock) {
  for (int i = 0; i < std::max(1, plan.rewarms); ++i) call();
  const double planned_s = plan.min_sample_s;
  const double t0 = now_s(), c0 = thread_clock ? thread_cpu_s() : 0.0;
  long done = 0;
  while (done < calls) {
    call();
    ++done;
    if ((done & 15) == 0 && now_s() - t0 > 5 * planned_s) break;
  }
  const double elapsed = thread_clock ? thread_cpu_s() - c0 : now_s() - t0;
  return elapsed / static_cast<double>(done);
}

// The two fastest samples agree within `settle`.
bool settled(std::vector<double> s, double settle) {
  if (s.size() < 2) return false;
  std::partial_sort(s.begin(), s.begin() + 2, s.end());
  return s[1] <= s[0] * (1 + settle);
}

}  // namespace

hw::TimeStats stats_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  if (n == 0) return {};
  const double median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return {samples.front(), median, samples.back()};
}

Timed time_call(const std::function<void()>& call, const TimingPlan& plan) {
  const long calls = warm_up(call, plan);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(plan.repeats));
  for (int r = 0; r < plan.repeats; ++r) samples.push_back(sample(call, calls, plan, plan.thread_clock));
  return {stats_of(std::move(samples)), plan.repeats};
}

std::vector<Timed> Rounds::run(const TimingPlan& plan) const {
  const double start = now_s();
  std::vector<long> calls;
  for (const auto& c : calls_) calls.push_back(warm_up(c, plan));
  std::vector<std::vector<double>> samples(calls_.size());
  for (int r = 0; r < plan.max_repeats; ++r) {
    const bool extra = r >= plan.repeats;
    if (extra && now_s() - start > plan.budget_s) break;
    bool any = false;
    for (std::size_t i = 0; i < calls_.size(); ++i) {
      if (extra && settled(samples[i], plan.settle)) continue;
      samples[i].push_back(sample(calls_[i], calls[i], plan, plan.thread_clock && one_thread_[i]));
      any = true;
    }
    if (!any) break;
  }
  std::vector<Timed> out;
  for (auto& s : samples) {
    const int n = static_cast<int>(s.size());
    out.push_back({stats_of(std::move(s)), n});
  }
  return out;
}

TimingPlan plan_for(bool quick) {
  TimingPlan p;
  p.repeats = quick ? 7 : 15;
  p.max_repeats = quick ? 21 : 45;
  p.budget_s = quick ? 4 : 60;
  p.min_sample_s = quick ? 1e-3 : 5e-3;
  p.warmups = 2;
  p.thread_clock = true;
  return p;
}

}  // namespace exasim::bench
