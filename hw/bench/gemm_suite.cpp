// GEMM through Eigen (C = A B, column-major, fp32 and fp64) over shapes from matrix-vector (one
// token of decode) to square training-size products, with one thread and with all cores.
// GCC 12 reports -Wmaybe-uninitialized inside its own avx512fintrin.h when Eigen's AVX-512 kernels
// are inlined here (a known false positive of the masked-load intrinsics).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/bench/cpu_suites.hpp"
#include "hw/bench/host_info.hpp"
#include "hw/bench/timing.hpp"

namespace exasim::bench {

namespace {

struct Shape {
  int m, n, k;
};

// Squares for the compute-bound curve; products as LLM layers see them (m = tokens), from one
// token of decode (matrix-vector; its weights mostly DRAM-sized, as a model's are) to
// prefill-sized batches. A quick run keeps each call within a
// few ms (fp64, one core), shorter than a scheduler time slice on a busy machine. Full runs add
// larger ones, and 256^3: Eigen 3.4 runs fp32 products with m = k = 240..256 on one core at ~60%
// of its usual rate (seen on AMD Zen 5; a blocking quirk) that a quick fit should not have to learn.
std::vector<Shape> shapes(bool quick) {
  std::vector<Shape> s = {{64, 64, 64},      {128, 128, 128},   {192, 192, 192},  {320, 320, 320},
                          {384, 384, 384},   {512, 512, 512},   {1, 8192, 2048},  {1, 4096, 4096},
                          {1, 2048, 8192},   {4, 2048, 1024},   {8, 2048, 1024},  {12, 2048, 1024},
                          {16, 1024, 2048},  {24, 1024, 1024},  {32, 1024, 1024}, {64, 1024, 1024},
                          {128, 2048, 512},  {384, 1024, 128},  {1024, 256, 512}, {512, 512, 1024},
                          {256, 1024, 512}};
  if (!quick) {
    const std::vector<Shape> more = {{96, 96, 96},       {256, 256, 256},   {768, 768, 768},   {1024, 1024, 1024},
                                     {1536, 1536, 1536}, {2048, 2048, 2048}, {1, 4096, 4096},   {4, 4096, 1024},
                                     {16, 4096, 4096},   {64, 4096, 1024},   {2048, 1024, 256}, {320, 1280, 960},
                                     {1000, 1000, 1000}, {512, 512, 2048}};
    s.insert(s.end(), more.begin(), more.end());
  }
  return s;
}

// One timed product: its own random non-zero operands (uniform in [-1, 1]; values do not change
// the work, but zeros and denormals could on some CPUs), run on `threads` threads.
template <class Scalar>
std::function<void()> product(const Shape& sh, int threads) {
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  auto a = std::make_shared<Matrix>(Matrix::Random(sh.m, sh.k));
  auto b = std::make_shared<Matrix>(Matrix::Random(sh.k, sh.n));
  auto c = std::make_shared<Matrix>(Matrix::Zero(sh.m, sh.n));
  return [a, b, c, threads] {
    Eigen::setNbThreads(threads);
    c->noalias() = *a * *b;
  };
}

struct Case {
  Shape shape;
  int threads;
  const char* dtype;
  double bytes_per_element;
};

hw::Measurement measurement(const Case& c, const hw::ProfileDevice& dev, const Timed& r) {
  const Shape& sh = c.shape;
  hw::Measurement m;
  m.suite = "gemm";
  m.op = "gemm";
  m.device = dev.index;
  m.dtype = c.dtype;
  m.shape = {{"m", sh.m}, {"n", sh.n}, {"k", sh.k}, {"batch", 1}};  // int -> double is exact
  m.threads = c.threads;
  m.flops = 2.0 * sh.m * sh.n * sh.k;
  m.bytes = c.bytes_per_element * (1.0 * sh.m * sh.k + 1.0 * sh.k * sh.n + 1.0 * sh.m * sh.n);
  m.working_set_bytes = m.bytes;
  m.repeats = r.repeats;
  m.time_s = r.per_call;
  return m;
}

void run_gemm(Recorder& rec, const hw::ProfileDevice& dev) {
  rec.profile.host_text["eigen_simd"] = Eigen::SimdInstructionSetsInUse();
  const int all = all_threads(rec.options);
  std::vector<int> thread_counts = {1};
  if (all > 1) thread_counts.push_back(all);
  std::vector<Case> cases;
  Rounds rounds;
  for (int t : thread_counts) {
    for (const Shape& sh : shapes(rec.options.quick)) {
      cases.push_back({sh, t, "fp32", 4});
      rounds.add(product<float>(sh, t), t == 1);
      cases.push_back({sh, t, "fp64", 8});
      rounds.add(product<double>(sh, t), t == 1);
    }
  }
  const std::vector<Timed> times = rounds.run(plan_for(rec.options.quick));
  for (std::size_t i = 0; i < cases.size(); ++i) rec.add(measurement(cases[i], dev, times[i]));
  Eigen::setNbThreads(0);  // back to Eigen's default
}

}  // namespace

Suite gemm_suite() {
  return {"gemm", "cpu", "Eigen GEMM fp32/fp64 over decode-to-training shapes, 1 thread and all cores", run_gemm};
}

}  // namespace exasim::bench
