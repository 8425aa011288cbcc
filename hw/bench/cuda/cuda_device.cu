// Which CUDA GPUs exasim-bench measures, what it records about them, and the CUDA suite table.
#include <cuda_runtime.h>

#include <ostream>
#include <string>

#include "hw/bench/cuda/cuda_check.hpp"
#include "hw/bench/cuda/cuda_suites.hpp"
#include "hw/bench/cuda/cuda_timing.hpp"

namespace exasim::bench {

namespace {

int attribute(cudaDeviceAttr a, int dev) {
  int v = 0;
  EXASIM_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

hw::ProfileDevice describe(int ordinal, int index) {
  cudaDeviceProp prop{};
  EXASIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  hw::ProfileDevice d;
  d.index = index;
  d.kind = "gpu";
  d.name = prop.name;
  d.compute_units = prop.multiProcessorCount;
  d.clock_hz = attribute(cudaDevAttrClockRate, ordinal) * 1e3;  // kHz
  d.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  d.l2_bytes = prop.l2CacheSize;
  d.extra["cuda_ordinal"] = ordinal;
  d.extra["compute_capability"] = prop.major + 0.1 * prop.minor;
  d.extra["memory_clock_hz"] = attribute(cudaDevAttrMemoryClockRate, ordinal) * 1e3;
  d.extra["memory_bus_bits"] = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  d.extra["smem_per_sm_bytes"] = static_cast<double>(prop.sharedMemPerMultiprocessor);
  d.extra["max_threads_per_sm"] = prop.maxThreadsPerMultiProcessor;
  return d;
}

}  // namespace

void add_gpu_devices(hw::Profile& profile, std::ostream& log) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    const std::string why = e != cudaSuccess ? std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e) : "0 devices";
    const std::string note = "no CUDA GPU visible (" + why + "): GPU suites skipped, CPU suites run";
    profile.notes.push_back(note);
    log << "exasim-bench: " << note << "\n";
    return;
  }
  int cuda_runtime = 0, driver = 0;
  EXASIM_CUDA_CHECK(cudaRuntimeGetVersion(&cuda_runtime));
  EXASIM_CUDA_CHECK(cudaDriverGetVersion(&driver));
  profile.host["cuda_runtime_version"] = cuda_runtime;
  profile.host["cuda_driver_version"] = driver;
  for (int i = 0; i < count; ++i) {
    profile.devices.push_back(describe(i, static_cast<int>(profile.devices.size())));
    log << "exasim-bench: GPU " << i << ": " << profile.devices.back().name << "\n";
  }
}

std::vector<Suite> gpu_suites() {
  std::vector<Suite> s = {cuda::gemm_suite(),    cuda::stream_suite(),   cuda::cache_suite(),
                          cuda::latency_suite(), cuda::transfer_suite(), cuda::launch_suite()};
#ifdef EXASIM_BENCH_NCCL
  s.push_back(cuda::collective_suite());
#endif
  return s;
}

namespace cuda {

int ordinal_of(const hw::ProfileDevice& d) {
  const auto it = d.extra.find("cuda_ordinal");
  return it == d.extra.end() ? 0 : static_cast<int>(it->second);
}

}  // namespace cuda

}  // namespace exasim::bench
