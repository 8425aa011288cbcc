// Pseudo-random non-zero device data for the CUDA suites (see fill_random in cuda_timing.hpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "hw/bench/cuda/cuda_timing.hpp"

namespace exasim::bench::cuda {

namespace {

__device__ float hashed_value(std::size_t i, unsigned seed) {
  unsigned x = static_cast<unsigned>(i) * 2654435761u ^ (seed * 0x9E3779B9u) ^ static_cast<unsigned>(i >> 32);
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  const float u = (x & 0xFFFFFF) / 16777216.0f;  // [0, 1)
  const float magnitude = 0.05f + 0.95f * u;
  return (x & 0x80000000u) ? -magnitude : magnitude;
}

template <class T>
__global__ void fill_kernel(T* data, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    data[i] = T(hashed_value(i, seed));
  }
}

}  // namespace

template <class T>
void fill_random(T* data, std::size_t n, unsigned seed, cudaStream_t stream) {
  fill_kernel<T><<<1024, 256, 0, stream>>>(data, n, seed);
  EXASIM_CUDA_CHECK_LAUNCH();
}

template void fill_random<float>(float*, std::size_t, unsigned, cudaStream_t);
template void fill_random<__half>(__half*, std::size_t, unsigned, cudaStream_t);
template void fill_random<__nv_bfloat16>(__nv_bfloat16*, std::size_t, unsigned, cudaStream_t);
template void fill_random<__nv_fp8_e4m3>(__nv_fp8_e4m3*, std::size_t, unsigned, cudaStream_t);

}  // namespace exasim::bench::cuda
