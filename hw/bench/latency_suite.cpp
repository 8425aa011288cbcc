// Load-to-use latency by pointer chase: one pointer per 64-byte line, lines linked in one random
// cycle (Sattolo's shuffle), so every load depends on the previous one and prefetchers cannot help.
// Time per access over working sets from L1 to DRAM traces the cache levels and DRAM latency.
// The buffer asks for transparent huge pages so that the DRAM figure is not mostly TLB misses.
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hw/bench/cpu_suites.hpp"
#include "hw/bench/timing.hpp"
#include "hw/error.hpp"

namespace exasim::bench {

namespace {

constexpr std::size_t kLine = 64;          // bytes: x86 and most Arm cache lines
constexpr std::size_t kHugePage = 2 << 20;  // bytes: x86-64 transparent huge page

struct Line {
  Line* next;
  char pad[kLine - sizeof(Line*)];
};

struct FreeDeleter {
  void operator()(Line* p) const { std::free(p); }
};

// Builds the cycle over `lines` lines; a fixed seed keeps the walk the same from run to run.
std::unique_ptr<Line[], FreeDeleter> make_cycle(std::size_t lines) {
  const std::size_t bytes = std::max(kHugePage, ((lines * kLine + kHugePage - 1) / kHugePage) * kHugePage);
  auto* buf = static_cast<Line*>(std::aligned_alloc(kHugePage, bytes));
  if (!buf) throw IoError("cannot allocate " + std::to_string(bytes) + " bytes for the pointer chase", {}, "use --quick");
#ifdef MADV_HUGEPAGE
  madvise(buf, bytes, MADV_HUGEPAGE);
#endif
  std::vector<std::uint32_t> order(lines);
  for (std::size_t i = 0; i < lines; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::mt19937_64 rng(12345);
  for (std::size_t i = lines - 1; i > 0; --i) {  // Sattolo: a single cycle through all lines
    std::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(order[i], order[pick(rng)]);
  }
  for (std::size_t i = 0; i < lines; ++i) buf[order[i]].next = &buf[order[(i + 1) % lines]];
  return std::unique_ptr<Line[], FreeDeleter>(buf);
}

Line* chase(Line* p, long steps) {
  for (long i = 0; i < steps; i += 8) {  // unrolled: the loop counter is off the critical path
    p = p->next; p = p->next; p = p->next; p = p->next;
    p = p->next; p = p->next; p = p->next; p = p->next;
  }
  return p;
}

void run_latency(Recorder& rec, const hw::ProfileDevice& dev) {
  const double l3 = std::max(rec.profile.host.at("l3_bytes"), 8.0 * 1048576);
  const double top = std::max(4.0 * l3, 64.0 * 1048576);
  const TimingPlan plan = plan_for(rec.options.quick);
  constexpr long kSteps = 4096;  // accesses per timed call
  for (double ws = 4096; ws <= top * 1.001; ws *= rec.options.quick ? 2.0 : 1.41421356) {
    const std::size_t lines = static_cast<std::size_t>(ws) / kLine;
    auto buf = make_cycle(lines);
    Line* p = chase(&buf[0], static_cast<long>(lines));  // warm: touch every line once
    // The walk continues from call to call, so a call never re-reads the lines of the previous one.
    const Timed r = time_call([&] { p = chase(p, kSteps); }, plan);
    volatile Line* sink = p;  // keeps the walk from being optimized away
    (void)sink;
    hw::Measurement m;
    m.suite = "latency";
    m.op = "pointer_chase";
    m.device = dev.index;
    m.shape = {{"lines", static_cast<double>(lines)}, {"stride_bytes", kLine}};
    m.threads = 1;
    m.working_set_bytes = static_cast<double>(lines * kLine);
    m.repeats = r.repeats;
    m.time_s = {r.per_call.min / kSteps, r.per_call.median / kSteps, r.per_call.max / kSteps};
    rec.add(m);
  }
}

}  // namespace

Suite latency_suite() {
  return {"latency", "cpu", "pointer-chase load latency over working sets, L1 to DRAM (1 thread)", run_latency};
}

}  // namespace exasim::bench
