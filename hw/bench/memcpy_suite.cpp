// Host memcpy bandwidth (std::memcpy, one thread) from cache-resident to DRAM-sized buffers. Bytes
// are counted like STREAM copy: each byte read once and written once (2 x size).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "hw/bench/cpu_suites.hpp"
#include "hw/bench/timing.hpp"
#include "hw/error.hpp"

namespace exasim::bench {

namespace {

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};

std::unique_ptr<char[], FreeDeleter> buffer(std::size_t bytes) {
  auto* p = static_cast<char*>(std::aligned_alloc(4096, ((bytes + 4095) / 4096) * 4096));
  if (!p) throw IoError("cannot allocate " + std::to_string(bytes) + " bytes for memcpy", {}, "use --quick");
  for (std::size_t i = 0; i < bytes; ++i) p[i] = static_cast<char>(1 + i % 251);  // non-zero, touched
  return std::unique_ptr<char[], FreeDeleter>(p);
}

void run_memcpy(Recorder& rec, const hw::ProfileDevice& dev) {
  const double l3 = std::max(rec.profile.host.at("l3_bytes"), 8.0 * 1048576);
  const std::size_t top = static_cast<std::size_t>(std::max(4.0 * l3, 64.0 * 1048576));  // per buffer
  auto src = buffer(top);
  auto dst = buffer(top);
  const TimingPlan plan = plan_for(rec.options.quick);
  for (std::size_t size = 16384; size <= top; size *= rec.options.quick ? 4 : 2) {
    const Timed r = time_call(
        [&] {
          std::memcpy(dst.get(), src.get(), size);
          asm volatile("" : : "r"(dst.get()) : "memory");  // the copy is observable: not elided
        },
        plan);
    hw::Measurement m;
    m.suite = "memcpy";
    m.op = "host";
    m.device = dev.index;
    m.shape = {{"size_bytes", static_cast<double>(size)}};
    m.threads = 1;
    m.bytes = 2.0 * static_cast<double>(size);
    m.working_set_bytes = m.bytes;
    m.repeats = r.repeats;
    m.time_s = r.per_call;
    rec.add(m);
  }
}

}  // namespace

Suite memcpy_suite() {
  return {"memcpy", "cpu", "host std::memcpy bandwidth, cache-resident to DRAM sizes (1 thread)", run_memcpy};
}

}  // namespace exasim::bench
