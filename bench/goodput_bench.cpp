// Goodput Monte Carlo speed: a 60-day horizon with ~500 interruptions a trial (Llama 3's rate at
// 16k GPUs: one every ~2.9 h), checkpoints at Daly's optimum, for the synchronous, asynchronous and
// elastic jobs; prints trials and interruptions simulated per second (issue 26: a 60-day horizon
// with 500 failures in well under a second).
//   exasim-goodput-bench [TRIALS]   (default 100)
#include <chrono>
#include <cstdio>
#include <algorithm>
#include <cstdlib>

#include "workloads/reliability/elastic_job.hpp"
#include "workloads/reliability/goodput.hpp"

using namespace exasim;
namespace rel = exasim::workloads::reliability;

namespace {

using Clock = std::chrono::steady_clock;

void bench(const char* name, const rel::GoodputInputs& in) {
  const auto t0 = Clock::now();
  const rel::GoodputEstimate e = rel::simulate_goodput(in);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double interruptions = e.interruptions_per_day * in.horizon_s / 86400 * in.trials;
  std::printf("%-12s %4d trials of 60 d in %.4f s: %.1f us a trial, %.0f interruptions/s (goodput %.4f)\n", name, in.trials, s,
              s / in.trials * 1e6, interruptions / s, e.fraction);
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::atoi(argv[1]) : 100;
  if (trials < 2) {
    std::fprintf(stderr, "exasim-goodput-bench: TRIALS must be at least 2\n");
    return 1;
  }
  const models::CheckpointedJob job{60 * 86400.0 / 500, 2.84, 783};
  rel::GoodputInputs in;
  in.job = job;
  in.interval_s = models::optimal_interval(job);
  in.horizon_s = 60 * 86400.0;
  in.trials = trials;
  bench("synchronous", in);
  in.upload_s = std::min(in.interval_s, 60.0);
  bench("async", in);
  in.upload_s = 0;
  in.elastic = rel::ElasticJob{128, 4 * 3600.0, 120, 9.2};
  bench("elastic", in);
  return 0;
}
