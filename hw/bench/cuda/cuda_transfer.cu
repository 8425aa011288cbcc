// Host<->device copy bandwidth over PCIe (or C2C), from pageable and from pinned host memory.
#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <vector>

#include "hw/bench/cuda/cuda_suites.hpp"
#include "hw/bench/cuda/cuda_timing.hpp"

namespace exasim::bench::cuda {

namespace {

struct PinnedBuffer {
  char* ptr = nullptr;
  explicit PinnedBuffer(std::size_t n) { EXASIM_CUDA_CHECK(cudaMallocHost(&ptr, n)); }
  ~PinnedBuffer() { cudaFreeHost(ptr); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
};

void run_transfer(Recorder& rec, const hw::ProfileDevice& dev) {
  EXASIM_CUDA_CHECK(cudaSetDevice(ordinal_of(dev)));
  cudaStream_t stream{};
  EXASIM_CUDA_CHECK(cudaStreamCreate(&stream));
  const std::vector<std::size_t> sizes = rec.options.quick
                                             ? std::vector<std::size_t>{1u << 20, 64u << 20}
                                             : std::vector<std::size_t>{64u << 10, 1u << 20, 16u << 20, 256u << 20, 1u << 30};
  const std::size_t top = sizes.back();
  DeviceBuffer<char> device(top);
  PinnedBuffer pinned(top);
  std::vector<char> pageable(top);
  for (std::size_t i = 0; i < top; ++i) pageable[i] = pinned.ptr[i] = static_cast<char>(1 + i % 251);  // touched, non-zero
  EventTimer timer;
  for (std::size_t size : sizes) {
    for (int pin = 0; pin < 2; ++pin) {
      char* host = pin ? pinned.ptr : pageable.data();
      for (int dir = 0; dir < 2; ++dir) {
        const cudaMemcpyKind kind = dir == 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        void* dst = dir == 0 ? static_cast<void*>(device.ptr) : static_cast<void*>(host);
        const void* src = dir == 0 ? static_cast<const void*>(host) : static_cast<const void*>(device.ptr);
        const Timed r = timer.time([&] { EXASIM_CUDA_CHECK(cudaMemcpyAsync(dst, src, size, kind, stream)); }, stream,
                                   plan_for(rec.options.quick));
        hw::Measurement m;
        m.suite = "memcpy";
        m.op = dir == 0 ? "h2d" : "d2h";
        m.device = dev.index;
        m.shape = {{"size_bytes", double(size)}, {"pinned", double(pin)}};
        m.bytes = double(size);
        m.working_set_bytes = double(size);
        m.repeats = r.repeats;
        m.time_s = r.per_call;
        rec.add(m);
      }
    }
  }
  EXASIM_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

Suite transfer_suite() {
  return {"memcpy", "gpu", "host<->device copy bandwidth, pageable and pinned", run_transfer};
}

}  // namespace exasim::bench::cuda
