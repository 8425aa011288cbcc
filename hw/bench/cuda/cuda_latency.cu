// L2 and HBM load latency by pointer chase: one thread follows a random cycle through 128-byte
// lines (Sattolo's shuffle, fixed seed) with L1-bypassing loads, each load depending on the last.
// Working sets inside the L2 give its latency; several times the L2 give HBM's (with TLB misses
// at the largest sizes, as a random access over that much memory has them).
#include <algorithm>
#include <random>
#include <vector>

#include "hw/bench/cuda/cuda_suites.hpp"
#include "hw/bench/cuda/cuda_timing.hpp"

namespace exasim::bench::cuda {

namespace {

constexpr std::size_t kLine = 128;                      // bytes: L2 line of NVIDIA GPUs
constexpr std::size_t kStride = kLine / sizeof(unsigned);  // elements per line

// Follows `steps` links from pos[0] and stores where it stopped, so that the next launch goes on
// along the cycle instead of re-reading lines the last one brought into the cache.
__global__ void chase_kernel(const unsigned* __restrict__ next, long steps, unsigned* pos) {
  unsigned p = pos[0];
  for (long i = 0; i < steps; ++i) p = __ldcg(next + p);
  pos[0] = p;
}

std::vector<unsigned> cycle(std::size_t lines) {
  std::vector<unsigned> order(lines);
  for (std::size_t i = 0; i < lines; ++i) order[i] = static_cast<unsigned>(i);
  std::mt19937_64 rng(12345);
  for (std::size_t i = lines - 1; i > 0; --i) {
    std::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(order[i], order[pick(rng)]);
  }
  std::vector<unsigned> next(lines * kStride, 0);
  for (std::size_t i = 0; i < lines; ++i) {
    next[order[i] * kStride] = static_cast<unsigned>(order[(i + 1) % lines] * kStride);
  }
  return next;
}

std::vector<double> working_sets(const hw::ProfileDevice& dev, bool quick) {
  const double l2 = std::max(dev.l2_bytes, 4.0 * 1048576);
  std::vector<double> out = quick ? std::vector<double>{l2 / 4, 4 * l2, 32 * l2}
                                  : std::vector<double>{l2 / 16, l2 / 4, l2 / 2, l2, 2 * l2, 4 * l2, 16 * l2, 64 * l2};
  const double limit = std::min(dev.memory_bytes / 8, 4.0 * (1u << 30));  // unsigned indices, host memory
  out.erase(std::remove_if(out.begin(), out.end(), [&](double ws) { return ws > limit; }), out.end());
  return out;
}

void run_latency(Recorder& rec, const hw::ProfileDevice& dev) {
  EXASIM_CUDA_CHECK(cudaSetDevice(ordinal_of(dev)));
  cudaStream_t stream{};
  EXASIM_CUDA_CHECK(cudaStreamCreate(&stream));
  EventTimer timer;
  const long steps = rec.options.quick ? 4096 : 16384;
  for (double ws : working_sets(dev, rec.options.quick)) {
    const std::size_t lines = static_cast<std::size_t>(ws) / kLine;
    const std::vector<unsigned> next = cycle(lines);
    DeviceBuffer<unsigned> d_next(next.size());
    DeviceBuffer<unsigned> pos(1);
    EXASIM_CUDA_CHECK(cudaMemcpy(d_next.ptr, next.data(), next.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
    EXASIM_CUDA_CHECK(cudaMemset(pos.ptr, 0, sizeof(unsigned)));
    const Timed r = timer.time(
        [&] {
          chase_kernel<<<1, 1, 0, stream>>>(d_next.ptr, steps, pos.ptr);
          EXASIM_CUDA_CHECK_LAUNCH();
        },
        stream, plan_for(rec.options.quick));
    hw::Measurement m;
    m.suite = "latency";
    m.op = "pointer_chase";
    m.device = dev.index;
    m.shape = {{"lines", double(lines)}, {"stride_bytes", double(kLine)}};
    m.working_set_bytes = double(lines) * kLine;
    m.repeats = r.repeats;
    m.time_s = {r.per_call.min / steps, r.per_call.median / steps, r.per_call.max / steps};
    rec.add(m);
  }
  EXASIM_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

Suite latency_suite() {
  return {"latency", "gpu", "L2 and HBM load latency by pointer chase (one thread)", run_latency};
}

}  // namespace exasim::bench::cuda
