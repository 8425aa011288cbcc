#pragma once
// Reader of NVIDIA AIConfigurator's measured GEMM tables (shared/data/kernels-aic/<gpu>/
// gemm_perf.csv; ai-dynamo/aiconfigurator, Apache-2.0): one row per GEMM C[m,n] = A[m,k] B[k,n]
// with `gemm_dtype`, `m`, `n`, `k` and `latency` in milliseconds per call, optionally `power`
// in watts (board power while the kernel ran) and `kernel_source`. The collector replays the
// framework's GEMM in a CUDA graph and times it between events, so a latency is the kernel's
// own time (SampleTiming::kKernel), launch excluded.
// gemm_dtype -> operand dtype, recipe and input cast (gemm_recipe.hpp): the op times the cast of
// its bf16 input with the GEMM (every quantized row has a ~4-14 us floor that bf16 lacks):
//   bfloat16 / float16          bf16 / fp16, dense, no cast
//   fp8, fp8_static             fp8 with per-tensor scales, dense; cast per_tensor / static
//   fp8_block                   fp8, 1x128 / 128x128 block scales (DeepGEMM); cast per_group
//   nvfp4                       fp4, NVFP4 (1 e4m3 scale per 16); cast per_group
//   sq                          int8 W8A8 (SmoothQuant), dense; cast per_group (per token)
//   int8_wo / int4_wo           int8 / int4 weights, 16-bit activations, weight-only, no cast
// Rows with m, n or k = 0 time an empty call (about 0.5 us), not a GEMM: they are counted and
// left out.
#include <string>
#include <vector>

#include "models/calibration/kernel_sample.hpp"

namespace exasim::models {

struct AicGemmTable {
  std::vector<KernelSample> samples;  // op: the row's gemm_dtype; source: the GPU folder name
  int empty_rows = 0;                 // rows with a zero dimension, left out
};

// Throws IoError when the file cannot be read, ConfigError (file, line, column) on a bad row:
// a cell that is not a number, a dimension that is not a whole number in [0, 2^31), a
// non-positive latency, an unknown gemm_dtype (the message lists the known ones), more fields
// than the header; and on a table with no GEMM of m, n, k > 0 (nothing to fit).
AicGemmTable read_aic_gemm_table(const std::string& path);

// The catalog GPU of an AIConfigurator table, from its folder name (a100_sxm -> A100-SXM4-80GB,
// h100_sxm, h200_sxm, b200_sxm, gb200, l40s); empty when unknown.
std::string aic_table_gpu(const std::string& path);

// True when the file looks like an AIConfigurator GEMM table (a CSV whose header has
// gemm_dtype, m, n, k and latency).
bool is_aic_gemm_table(const std::string& path);

}  // namespace exasim::models
