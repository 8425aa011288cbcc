// Kernel launch overhead: back-to-back launches of an empty kernel (the launch rate a stream
// sustains, timed by events) and launch plus synchronize (the round trip the host sees).
#include <cuda_runtime.h>

#include "hw/bench/cuda/cuda_suites.hpp"
#include "hw/bench/cuda/cuda_timing.hpp"

namespace exasim::bench::cuda {

namespace {

__global__ void empty_kernel() {}

hw::Measurement record(const hw::ProfileDevice& dev, const char* op, const Timed& r) {
  hw::Measurement m;
  m.suite = "launch";
  m.op = op;
  m.device = dev.index;
  m.shape = {{"blocks", 1}, {"threads", 1}};
  m.repeats = r.repeats;
  m.time_s = r.per_call;
  return m;
}

void run_launch(Recorder& rec, const hw::ProfileDevice& dev) {
  EXASIM_CUDA_CHECK(cudaSetDevice(ordinal_of(dev)));
  cudaStream_t stream{};
  EXASIM_CUDA_CHECK(cudaStreamCreate(&stream));
  auto launch = [&] {
    empty_kernel<<<1, 1, 0, stream>>>();
    EXASIM_CUDA_CHECK_LAUNCH();
  };
  EventTimer timer;
  rec.add(record(dev, "empty_kernel", timer.time(launch, stream, plan_for(rec.options.quick))));
  TimingPlan wall = plan_for(rec.options.quick);
  wall.thread_clock = false;  // the host waits for the GPU: wall time is the answer
  const Timed sync = time_call(
      [&] {
        launch();
        EXASIM_CUDA_CHECK(cudaStreamSynchronize(stream));
      },
      wall);
  rec.add(record(dev, "empty_kernel_sync", sync));
  EXASIM_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

Suite launch_suite() {
  return {"launch", "gpu", "empty-kernel launch overhead: stream rate and host round trip", run_launch};
}

}  // namespace exasim::bench::cuda
