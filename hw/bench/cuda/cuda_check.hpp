#pragma once
// Every CUDA, cuBLASLt and NCCL call of exasim-bench goes through these checks: a failure throws
// an exasim::Error naming the call, its file and line, and the library's own message.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "hw/error.hpp"

namespace exasim::bench::cuda {

[[noreturn]] inline void fail(const std::string& what, const char* call, const char* file, int line) {
  throw Error(what, {file, line, call}, "is the GPU in use, out of memory or in a bad state? nvidia-smi shows it");
}

inline void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) fail(std::string("CUDA error ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e), call, file, line);
}

// cublasGetStatusName lives in libcublas, which the runner does not otherwise need.
inline const char* status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "cuBLAS status";
  }
}

inline void check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    fail(std::string("cuBLASLt error ") + status_name(s) + " (" + std::to_string(static_cast<int>(s)) + ")", call, file, line);
  }
}

}  // namespace exasim::bench::cuda

#define EXASIM_CUDA_CHECK(call) ::exasim::bench::cuda::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch errors show at once, execution errors at the next synchronization.
#define EXASIM_CUDA_CHECK_LAUNCH() EXASIM_CUDA_CHECK(cudaGetLastError())
