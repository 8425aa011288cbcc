// Device memory bandwidth: STREAM copy and triad (float4 grid-stride kernels) over working sets
// from L2-resident to several times the L2 (so HBM, not L2, is measured there); L2 read bandwidth
// (loads that bypass L1 over a buffer half the L2's size) and shared-memory read bandwidth.
#include <algorithm>
#include <string>
#include <vector>

#include "hw/bench/cuda/cuda_suites.hpp"
#include "hw/bench/cuda/cuda_timing.hpp"

namespace exasim::bench::cuda {

namespace {

constexpr int kBlock = 256;
constexpr float kScalar = 3.0f;

__global__ void copy_kernel(const float4* __restrict__ a, float4* __restrict__ c, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    c[i] = a[i];
  }
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                             std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + kScalar * y.x, x.y + kScalar * y.y, x.z + kScalar * y.z, x.w + kScalar * y.w);
  }
}

// Reads `n` float4 `passes` times with L1-bypassing loads; the sum is stored only if it equals an
// impossible value, so the loads cannot be removed and nothing is written.
__global__ void l2_read_kernel(const float4* __restrict__ a, std::size_t n, int passes, float* out) {
  float sum = 0;
  for (int p = 0; p < passes; ++p) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
      const float4 v = __ldcg(a + i);
      sum += v.x + v.y + v.z + v.w;
    }
  }
  if (sum == -1.2345f) out[0] = sum;
}

// Each thread reads `iters` float4 from shared memory, a different one each time, conflict-free.
__global__ void smem_read_kernel(int iters, float* out) {
  __shared__ float4 buf[kBlock];
  buf[threadIdx.x] = make_float4(threadIdx.x, 1, 2, 3);
  __syncthreads();
  float sum = 0;
  for (int i = 0; i < iters; ++i) {
    const float4 v = buf[(threadIdx.x + i) % kBlock];
    sum += v.x + v.y + v.z + v.w;
  }
  if (sum == -1.2345f) out[0] = sum;
}

int grid_for(const hw::ProfileDevice& dev) { return static_cast<int>(dev.compute_units) * 8; }

hw::Measurement record(const hw::ProfileDevice& dev, const char* suite, const char* op, double bytes, double ws,
                       const Timed& r) {
  hw::Measurement m;
  m.suite = suite;
  m.op = op;
  m.device = dev.index;
  m.dtype = "fp32";
  m.bytes = bytes;
  m.working_set_bytes = ws;
  m.shape = {{"bytes", bytes}};
  m.repeats = r.repeats;
  m.time_s = r.per_call;
  return m;
}

// Working sets: inside the L2 (a quarter and a half of it), then 2x, 8x and 32x the L2 (HBM).
std::vector<double> working_sets(const hw::ProfileDevice& dev, bool quick) {
  const double l2 = std::max(dev.l2_bytes, 4.0 * 1048576);
  std::vector<double> out = {l2 / 4, l2 / 2, 2 * l2, 8 * l2};
  if (!quick) out = {l2 / 8, l2 / 4, l2 / 2, l2, 2 * l2, 4 * l2, 8 * l2, 16 * l2, 32 * l2};
  const double limit = dev.memory_bytes / 4;
  out.erase(std::remove_if(out.begin(), out.end(), [&](double ws) { return ws > limit; }), out.end());
  return out;
}

void run_stream(Recorder& rec, const hw::ProfileDevice& dev) {
  EXASIM_CUDA_CHECK(cudaSetDevice(ordinal_of(dev)));
  cudaStream_t stream{};
  EXASIM_CUDA_CHECK(cudaStreamCreate(&stream));
  const std::vector<double> sizes = working_sets(dev, rec.options.quick);
  const std::size_t max_n4 = static_cast<std::size_t>(sizes.back() / (2 * sizeof(float4)));
  DeviceBuffer<float4> a(max_n4), b(max_n4), c(max_n4);
  for (auto* buf : {&a, &b, &c}) fill_random(reinterpret_cast<float*>(buf->ptr), buf->count * 4, 7, stream);
  EventTimer timer;
  const int grid = grid_for(dev);
  for (double ws : sizes) {
    const std::size_t n2 = static_cast<std::size_t>(ws / (2 * sizeof(float4)));  // copy: 2 arrays
    const std::size_t n3 = static_cast<std::size_t>(ws / (3 * sizeof(float4)));  // triad: 3 arrays
    const Timed copy = timer.time(
        [&] {
          copy_kernel<<<grid, kBlock, 0, stream>>>(a.ptr, c.ptr, n2);
          EXASIM_CUDA_CHECK_LAUNCH();
        },
        stream, plan_for(rec.options.quick));
    rec.add(record(dev, "stream", "copy", 2.0 * n2 * sizeof(float4), 2.0 * n2 * sizeof(float4), copy));
    const Timed triad = timer.time(
        [&] {
          triad_kernel<<<grid, kBlock, 0, stream>>>(a.ptr, b.ptr, c.ptr, n3);
          EXASIM_CUDA_CHECK_LAUNCH();
        },
        stream, plan_for(rec.options.quick));
    rec.add(record(dev, "stream", "triad", 3.0 * n3 * sizeof(float4), 3.0 * n3 * sizeof(float4), triad));
  }
  EXASIM_CUDA_CHECK(cudaStreamDestroy(stream));
}

void run_cache(Recorder& rec, const hw::ProfileDevice& dev) {
  EXASIM_CUDA_CHECK(cudaSetDevice(ordinal_of(dev)));
  cudaStream_t stream{};
  EXASIM_CUDA_CHECK(cudaStreamCreate(&stream));
  const double l2 = std::max(dev.l2_bytes, 4.0 * 1048576);
  const std::size_t n4 = static_cast<std::size_t>(l2 / 2 / sizeof(float4));
  DeviceBuffer<float4> a(n4);
  DeviceBuffer<float> out(1);
  fill_random(reinterpret_cast<float*>(a.ptr), n4 * 4, 11, stream);
  EventTimer timer;
  const int grid = grid_for(dev), passes = 16, iters = 4096;
  const Timed l2r = timer.time(
      [&] {
        l2_read_kernel<<<grid, kBlock, 0, stream>>>(a.ptr, n4, passes, out.ptr);
        EXASIM_CUDA_CHECK_LAUNCH();
      },
      stream, plan_for(rec.options.quick));
  rec.add(record(dev, "cache", "l2_read", double(passes) * n4 * sizeof(float4), double(n4) * sizeof(float4), l2r));
  const Timed smem = timer.time(
      [&] {
        smem_read_kernel<<<grid, kBlock, 0, stream>>>(iters, out.ptr);
        EXASIM_CUDA_CHECK_LAUNCH();
      },
      stream, plan_for(rec.options.quick));
  rec.add(record(dev, "cache", "smem_read", double(grid) * kBlock * iters * sizeof(float4), kBlock * sizeof(float4), smem));
  EXASIM_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

Suite stream_suite() {
  return {"stream", "gpu", "device copy/triad bandwidth, L2-resident to HBM working sets", run_stream};
}

Suite cache_suite() {
  return {"cache", "gpu", "L2 read bandwidth (L1 bypassed) and shared-memory read bandwidth", run_cache};
}

}  // namespace exasim::bench::cuda
