// cuBLASLt GEMM sweep: D[m,n] = A[m,k] B[k,n] in the "TN" layout (A stored k-major, as FP8 requires;
// the same layout for every dtype), over shapes from decode (m = 1 token) to training sizes and
// dtypes fp32, tf32 (fp32 data, TF32 tensor cores), fp16, bf16 and fp8 (E4M3 in, bf16 out; compute
// capability 8.9 and later). The heuristic's first algorithm is timed, as a framework would run it,
// and its tile and split-K are recorded (Measurement::library) for the kernel calibration to compare
// with the tile the model picks.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "hw/bench/cuda/cuda_suites.hpp"
#include "hw/bench/cuda/cuda_timing.hpp"
#include "hw/profile/cublaslt_tiles.hpp"

namespace exasim::bench::cuda {

namespace {

struct Shape {
  long m, n, k;
};

struct GemmType {
  const char* name;
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  double ab_bytes, cd_bytes;
  double min_cc;  // compute capability that first supports it
};

const GemmType kTypes[] = {
    {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 0},
    {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 8.0},
    {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 0},
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 8.0},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 8.9},
};

// Llama-like layers (hidden 4096, MLP 14336) at token counts from decode to a training batch.
std::vector<Shape> shapes(bool quick) {
  std::vector<Shape> s;
  const std::vector<long> tokens = quick ? std::vector<long>{1, 16, 128, 1024, 4096}
                                         : std::vector<long>{1, 4, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
  for (long m : tokens) {
    s.push_back({m, 4096, 4096});
    s.push_back({m, 14336, 4096});
    if (!quick) s.push_back({m, 4096, 14336});
  }
  return s;
}

struct LtHandle {
  cublasLtHandle_t h{};
  LtHandle() { EXASIM_CUDA_CHECK(cublasLtCreate(&h)); }
  ~LtHandle() { cublasLtDestroy(h); }
};

void fill(void* p, std::size_t n, cudaDataType_t t, unsigned seed, cudaStream_t s) {
  if (t == CUDA_R_32F) fill_random(static_cast<float*>(p), n, seed, s);
  else if (t == CUDA_R_16F) fill_random(static_cast<__half*>(p), n, seed, s);
  else if (t == CUDA_R_16BF) fill_random(static_cast<__nv_bfloat16*>(p), n, seed, s);
  else fill_random(static_cast<__nv_fp8_e4m3*>(p), n, seed, s);
}

// The cuBLASLt descriptors of one problem, released however the scope is left.
struct LtPlan {
  cublasLtMatmulDesc_t op{};
  cublasLtMatrixLayout_t la{}, lb{}, ld{};
  cublasLtMatmulPreference_t pref{};
  cublasLtMatmulHeuristicResult_t heuristic{};

  LtPlan(const Shape& sh, const GemmType& ty, std::size_t workspace_bytes) {
    EXASIM_CUDA_CHECK(cublasLtMatmulDescCreate(&op, ty.compute, CUDA_R_32F));
    const cublasOperation_t trans = CUBLAS_OP_T, none = CUBLAS_OP_N;
    EXASIM_CUDA_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans));
    EXASIM_CUDA_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none));
    EXASIM_CUDA_CHECK(cublasLtMatrixLayoutCreate(&la, ty.ab, sh.k, sh.m, sh.k));
    EXASIM_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lb, ty.ab, sh.k, sh.n, sh.k));
    EXASIM_CUDA_CHECK(cublasLtMatrixLayoutCreate(&ld, ty.cd, sh.m, sh.n, sh.m));
    EXASIM_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    EXASIM_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &workspace_bytes, sizeof workspace_bytes));
  }
  ~LtPlan() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (ld) cublasLtMatrixLayoutDestroy(ld);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
  }
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;

  // The heuristic's first choice; false when cuBLASLt has none (e.g. fp8 with m = 1).
  bool find(cublasLtHandle_t lt) {
    int found = 0;
    const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heuristic, &found);
    return s == CUBLAS_STATUS_SUCCESS && found > 0;
  }
};

// The chosen algorithm's output tile and split-K, where cuBLASLt says (empty otherwise).
std::map<std::string, double> chosen_tile(const cublasLtMatmulAlgo_t& algo) {
  std::map<std::string, double> out;
  std::uint32_t tile = 0;
  std::int32_t split = 1;
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &written) ==
          CUBLAS_STATUS_SUCCESS && written == sizeof tile) {
    out["tile_id"] = tile;
    if (const auto shape = hw::cublaslt_tile_shape(static_cast<int>(tile))) {
      out["tile_m"] = shape->first;
      out["tile_n"] = shape->second;
    }
  }
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof split, &written) ==
          CUBLAS_STATUS_SUCCESS && written == sizeof split)
    out["split_k"] = split;
  return out;
}

hw::Measurement measurement(const hw::ProfileDevice& dev, const Shape& sh, const GemmType& ty, const Timed& r) {
  hw::Measurement m;
  m.suite = "gemm";
  m.op = "gemm";
  m.device = dev.index;
  m.dtype = ty.name;
  m.shape = {{"m", double(sh.m)}, {"n", double(sh.n)}, {"k", double(sh.k)}, {"batch", 1}};
  m.threads = 0;
  m.flops = 2.0 * sh.m * sh.n * sh.k;
  m.bytes = ty.ab_bytes * (double(sh.m) * sh.k + double(sh.k) * sh.n) + ty.cd_bytes * double(sh.m) * sh.n;
  m.working_set_bytes = m.bytes;
  m.repeats = r.repeats;
  m.time_s = r.per_call;
  return m;
}

// Times one shape and type; false when cuBLASLt has no algorithm for it.
bool time_gemm(Recorder& rec, const hw::ProfileDevice& dev, cublasLtHandle_t lt, const Shape& sh, const GemmType& ty,
               cudaStream_t stream) {
  DeviceBuffer<char> a(static_cast<std::size_t>(sh.m * sh.k * ty.ab_bytes));
  DeviceBuffer<char> b(static_cast<std::size_t>(sh.k * sh.n * ty.ab_bytes));
  DeviceBuffer<char> d(static_cast<std::size_t>(sh.m * sh.n * ty.cd_bytes));
  DeviceBuffer<char> workspace(32u << 20);
  fill(a.ptr, a.count / static_cast<std::size_t>(ty.ab_bytes), ty.ab, 1, stream);
  fill(b.ptr, b.count / static_cast<std::size_t>(ty.ab_bytes), ty.ab, 2, stream);
  LtPlan plan(sh, ty, workspace.count);
  if (!plan.find(lt)) return false;
  const float alpha = 1, beta = 0;
  EventTimer timer;
  const Timed r = timer.time(
      [&] {
        EXASIM_CUDA_CHECK(cublasLtMatmul(lt, plan.op, &alpha, a.ptr, plan.la, b.ptr, plan.lb, &beta, d.ptr, plan.ld,
                                         d.ptr, plan.ld, &plan.heuristic.algo, workspace.ptr, workspace.count, stream));
      },
      stream, plan_for(rec.options.quick));
  hw::Measurement m = measurement(dev, sh, ty, r);
  m.library = chosen_tile(plan.heuristic.algo);
  rec.add(m);
  return true;
}

void run_gemm(Recorder& rec, const hw::ProfileDevice& dev) {
  EXASIM_CUDA_CHECK(cudaSetDevice(ordinal_of(dev)));
  const double cc = dev.extra.count("compute_capability") ? dev.extra.at("compute_capability") : 0;
  LtHandle lt;
  cudaStream_t stream{};
  EXASIM_CUDA_CHECK(cudaStreamCreate(&stream));
  for (const GemmType& ty : kTypes) {
    if (cc + 1e-6 < ty.min_cc) {
      rec.log << "gemm: " << ty.name << " needs compute capability " << ty.min_cc << ": skipped on " << dev.name << "\n";
      continue;
    }
    for (const Shape& sh : shapes(rec.options.quick)) {
      if (!time_gemm(rec, dev, lt.h, sh, ty, stream)) {
        rec.log << "gemm: no cuBLASLt algorithm for " << ty.name << " " << sh.m << "x" << sh.n << "x" << sh.k
                << ": skipped\n";
      }
    }
  }
  EXASIM_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

Suite gemm_suite() {
  return {"gemm", "gpu", "cuBLASLt GEMM fp32/tf32/fp16/bf16/fp8, decode to training shapes", run_gemm};
}

}  // namespace exasim::bench::cuda
