// STREAM (McCalpin) copy/scale/add/triad over working sets from L1 to DRAM, with one thread and
// with all cores (OpenMP, static schedule, first touch by the thread that later uses the data),
// and a read-only sum: STREAM's kernels all write, so read and write bandwidth are told apart only
// by add minus copy, a difference of two noisy times; a kernel that only reads measures the read
// bandwidth that a matrix-vector product (decode's weights) streams at.
// Bytes are counted the STREAM way (each array element read or written once; write-allocate
// traffic is not counted, so the calibrated model learns it as a higher cost per written byte).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "hw/bench/cpu_suites.hpp"
#include "hw/bench/host_info.hpp"
#include "hw/bench/suite.hpp"
#include "hw/bench/timing.hpp"
#include "hw/error.hpp"

namespace exasim::bench {

namespace {

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

Array allocate(long n) {
  const std::size_t bytes = ((static_cast<std::size_t>(n) * sizeof(double) + 4095) / 4096) * 4096;
  auto* p = static_cast<double*>(std::aligned_alloc(4096, bytes));
  if (!p) throw IoError("cannot allocate " + std::to_string(bytes) + " bytes for STREAM", {}, "use --quick");
  return Array(p);
}

// The three arrays start 1 KiB + 64 B apart modulo 4 KiB (STREAM's OFFSET does the same): with
// page-aligned starts, a[i], b[i] and c[i] share their low 12 address bits and loads wait on
// stores to other arrays that only look like the same address (4K aliasing), which would make
// triad and add differ in L1 for no reason a model should learn.
constexpr long kOffsetDoubles = (1024 + 64) / sizeof(double);

struct Arrays {
  Array a_store, b_store, c_store;
  double* a;
  double* b;
  double* c;
  double sum = 0;  // where `read` leaves its result, so that the compiler keeps the loop
  // `n_a` elements in a (read alone sums the whole working set in it), `n` in b and c.
  Arrays(long n_a, long n)
      : a_store(allocate(n_a + 3 * kOffsetDoubles)),
        b_store(allocate(n + 3 * kOffsetDoubles)),
        c_store(allocate(n + 3 * kOffsetDoubles)),
        a(a_store.get()),
        b(b_store.get() + kOffsetDoubles),
        c(c_store.get() + 2 * kOffsetDoubles) {}
};

struct Op {
  const char* name;
  int reads;   // arrays read
  int writes;  // arrays written
  void (*kernel)(Arrays& x, long n, int threads);
};

constexpr double kScalar = 3.0;

// One thread runs the loop itself, outside any OpenMP region: a one-core STREAM measures memory,
// not the cost of starting a parallel region (that is measured with all cores, as fork_join).
void copy(Arrays& x, long n, int t) {
  double* __restrict c = x.c;
  const double* __restrict a = x.a;
  if (t == 1) {
#pragma omp simd
    for (long i = 0; i < n; ++i) c[i] = a[i];
    return;
  }
#pragma omp parallel for simd num_threads(t) schedule(static)
  for (long i = 0; i < n; ++i) c[i] = a[i];
}
void scale(Arrays& x, long n, int t) {
  double* __restrict b = x.b;
  const double* __restrict c = x.c;
  if (t == 1) {
#pragma omp simd
    for (long i = 0; i < n; ++i) b[i] = kScalar * c[i];
    return;
  }
#pragma omp parallel for simd num_threads(t) schedule(static)
  for (long i = 0; i < n; ++i) b[i] = kScalar * c[i];
}
void add(Arrays& x, long n, int t) {
  double* __restrict c = x.c;
  const double* __restrict a = x.a;
  const double* __restrict b = x.b;
  if (t == 1) {
#pragma omp simd
    for (long i = 0; i < n; ++i) c[i] = a[i] + b[i];
    return;
  }
#pragma omp parallel for simd num_threads(t) schedule(static)
  for (long i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
void triad(Arrays& x, long n, int t) {
  double* __restrict a = x.a;
  const double* __restrict b = x.b;
  const double* __restrict c = x.c;
  if (t == 1) {
#pragma omp simd
    for (long i = 0; i < n; ++i) a[i] = b[i] + kScalar * c[i];
    return;
  }
#pragma omp parallel for simd num_threads(t) schedule(static)
  for (long i = 0; i < n; ++i) a[i] = b[i] + kScalar * c[i];
}

// A sum is one chain of dependent adds unless it is split: 64 partial sums (8 AVX-512 or 16 AVX2
// registers) keep enough adds in flight for two loads a cycle; with one vector of partial sums
// (omp simd reduction) it ran at 60 GB/s in L1 on a Xeon of 2026-12-07, an add's latency per
// vector, where 64 sums reach 174 GB/s.
constexpr int kPartialSums = 64;
double sum_of(const double* __restrict a, long begin, long end) {
  double part[kPartialSums] = {};
  long i = begin;
  for (; i + kPartialSums <= end; i += kPartialSums) {
#pragma omp simd
    for (int j = 0; j < kPartialSums; ++j) part[j] += a[i + j];
  }
  double s = 0;
  for (; i < end; ++i) s += a[i];
  for (double p : part) s += p;
  return s;
}
void read(Arrays& x, long n, int t) {
  if (t == 1) {
    x.sum = sum_of(x.a, 0, n);
    return;
  }
  double s = 0;
#pragma omp parallel num_threads(t) reduction(+ : s)
  {  // the static schedule's contiguous blocks, as the STREAM kernels split their loops
    const long me = omp_get_thread_num(), all = omp_get_num_threads();
    s += sum_of(x.a, n * me / all, n * (me + 1) / all);
  }
  x.sum = s;
}

constexpr Op kOps[] = {{"copy", 1, 1, copy},
                       {"scale", 1, 1, scale},
                       {"add", 2, 1, add},
                       {"triad", 2, 1, triad},
                       {"read", 1, 0, read}};

// Total working sets (all arrays an op touches) from well inside L1 to 8x the L3 (at most 1 GiB
// in a quick run, 4 GiB in a full one): every cache level gets points inside it and DRAM several.
std::vector<double> working_sets(const hw::Profile& p, bool quick) {
  const double l3 = std::max(p.host.at("l3_bytes"), 8.0 * 1048576);
  const double top = std::min(std::max(8.0 * l3, 128.0 * 1048576), (quick ? 1.0 : 4.0) * 1073741824);
  std::vector<double> out;
  // Quick runs step by 2 beyond 4 MiB and by sqrt(2) below, where L1 and L2 have few points.
  for (double ws = 8192; ws <= top * 1.001; ws *= quick && ws >= 4.0 * 1048576 ? 2.0 : 1.41421356) {
    out.push_back(std::round(ws / 1024) * 1024);
  }
  return out;
}

struct Case {
  const Op* op;
  long n;
  int threads;
  int reps;  // kernel runs per timed call, so that a call moves at least kMinCallBytes
};

// Small working sets run the kernel several times per call, as STREAM's own timing loop does, so
// that the time of calling through std::function (~20 ns) does not pass for L1 bandwidth.
constexpr double kMinCallBytes = 512.0 * 1024;

hw::Measurement measurement(const Case& c, const hw::ProfileDevice& dev, const Timed& r) {
  hw::Measurement m;
  m.suite = "stream";
  m.op = c.op->name;
  m.device = dev.index;
  m.dtype = "fp64";
  m.shape = {{"elements", static_cast<double>(c.n)}, {"arrays_read", c.op->reads}, {"arrays_written", c.op->writes}};
  m.threads = c.threads;
  m.bytes = static_cast<double>(c.n) * (c.op->reads + c.op->writes) * sizeof(double);
  m.working_set_bytes = m.bytes;
  m.repeats = r.repeats;
  m.time_s = {r.per_call.min / c.reps, r.per_call.median / c.reps, r.per_call.max / c.reps};  // per kernel
  return m;
}

void run_stream(Recorder& rec, const hw::ProfileDevice& dev) {
  const std::vector<double> sizes = working_sets(rec.profile, rec.options.quick);
  const long max_n = static_cast<long>(sizes.back() / (2 * sizeof(double)));  // copy touches 2 arrays
  const long max_read_n = 2 * max_n;                                           // read touches 1
  const int all = all_threads(rec.options);
  Arrays x(max_read_n, max_n);
#pragma omp parallel for num_threads(all) schedule(static)
  for (long i = 0; i < max_n; ++i) {  // STREAM's initial values; first touch spreads pages over threads
    x.a[i] = 1.0;
    x.b[i] = 2.0;
    x.c[i] = 0.0;
  }
#pragma omp parallel for num_threads(all) schedule(static)
  for (long i = max_n; i < max_read_n; ++i) x.a[i] = 1.0;
  std::vector<int> thread_counts = {1};
  if (all > 1) thread_counts.push_back(all);
  std::vector<Case> cases;
  Rounds rounds;
  for (int t : thread_counts) {
    for (double ws : sizes) {
      for (const Op& op : kOps) {
        const Case c{&op, static_cast<long>(ws / ((op.reads + op.writes) * sizeof(double))), t,
                     static_cast<int>(std::max(1.0, std::round(kMinCallBytes / ws)))};
        cases.push_back(c);
        rounds.add(
            [&x, c] {
              for (int r = 0; r < c.reps; ++r) c.op->kernel(x, c.n, c.threads);
            },
            t == 1);
      }
    }
  }
  const std::vector<Timed> times = rounds.run(plan_for(rec.options.quick));
  for (std::size_t i = 0; i < cases.size(); ++i) rec.add(measurement(cases[i], dev, times[i]));
}

}  // namespace

Suite stream_suite() {
  return {"stream", "cpu", "STREAM copy/scale/add/triad and a read-only sum, L1 to DRAM working sets, 1 thread and all cores",
          run_stream};
}

}  // namespace exasim::bench
