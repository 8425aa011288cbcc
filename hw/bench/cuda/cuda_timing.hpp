#pragma once
// GPU timing with CUDA events: warm-up launches, enough launches per sample to last at least
// min_sample_s (event resolution is ~0.5 us), the min/median/max over repeats.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <ostream>
#include <vector>

#include "hw/bench/cuda/cuda_check.hpp"
#include "hw/bench/timing.hpp"

namespace exasim::bench::cuda {

// Device memory owned by RAII: freed even when a check throws halfway through a suite.
template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  std::size_t count = 0;
  explicit DeviceBuffer(std::size_t n) : count(n) { EXASIM_CUDA_CHECK(cudaMalloc(&ptr, n * sizeof(T))); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

class EventTimer {
 public:
  EventTimer() {
    EXASIM_CUDA_CHECK(cudaEventCreate(&start_));
    EXASIM_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Seconds per launch of `launch` (which enqueues on `stream`), per the plan.
  Timed time(const std::function<void()>& launch, cudaStream_t stream, const TimingPlan& plan) {
    for (int i = 0; i < std::max(2, plan.warmups); ++i) launch();
    EXASIM_CUDA_CHECK(cudaStreamSynchronize(stream));
    const double one = sample(launch, stream, 1);
    const long calls = std::clamp(static_cast<long>(std::ceil(plan.min_sample_s / std::max(one, 1e-7))), 1L, 100000L);
    std::vector<double> samples;
    for (int r = 0; r < plan.repeats; ++r) samples.push_back(sample(launch, stream, calls));
    return {stats_of(std::move(samples)), plan.repeats};
  }

 private:
  double sample(const std::function<void()>& launch, cudaStream_t stream, long calls) {
    EXASIM_CUDA_CHECK(cudaEventRecord(start_, stream));
    for (long c = 0; c < calls; ++c) launch();
    EXASIM_CUDA_CHECK(cudaEventRecord(stop_, stream));
    EXASIM_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    EXASIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3 / static_cast<double>(calls);
  }

  cudaEvent_t start_{}, stop_{};
};

// Fills `n` elements with pseudo-random non-zero values in [-1, -0.05] u [0.05, 1] (a hash of the
// index and seed; no zeros or denormals, whose handling could change the work).
template <class T>
void fill_random(T* data, std::size_t n, unsigned seed, cudaStream_t stream);

// The CUDA ordinal of a profile device (exasim-bench stores it in extra["cuda_ordinal"]).
int ordinal_of(const hw::ProfileDevice& d);

}  // namespace exasim::bench::cuda
