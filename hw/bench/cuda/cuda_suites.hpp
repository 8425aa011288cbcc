#pragma once
// The CUDA suites of exasim-bench, one per file (built when CMake finds nvcc).
#include "hw/bench/suite.hpp"

namespace exasim::bench::cuda {

Suite gemm_suite();        // cuda_gemm.cu: cuBLASLt GEMM, fp32/tf32/fp16/bf16/fp8
Suite stream_suite();      // cuda_memory.cu: device copy/triad from L2-resident to HBM sizes
Suite cache_suite();       // cuda_memory.cu: L2 and shared-memory read bandwidth
Suite latency_suite();     // cuda_latency.cu: L2 and HBM pointer chase
Suite transfer_suite();    // cuda_transfer.cu: host<->device, pageable and pinned
Suite launch_suite();      // cuda_launch.cu: empty-kernel launch overhead
Suite collective_suite();  // nccl_collectives.cu (when NCCL is found): all-reduce, all-gather, ...

}  // namespace exasim::bench::cuda
