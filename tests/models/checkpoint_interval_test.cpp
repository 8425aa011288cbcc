// The checkpointed job's closed forms (models/reliability/checkpoint_interval.hpp): Daly's expected
// goodput by hand, and the optimum against Young's and Daly's formulas.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

#include "approx.hpp"
#include "models/reliability/checkpoint_interval.hpp"

using exasim::models::CheckpointedJob;

TEST_CASE("checkpoint interval: expected goodput by hand") {
  // No checkpoint cost, no restart, a segment as long as the MTBF: each segment takes
  // M (e - 1) of wall time on average for M of work.
  CHECK(exasim::models::expected_goodput({3600, 0, 0}, 3600) == exasim::testing::approx(1 / (std::exp(1.0) - 1)).epsilon(1e-12));
  // A restart multiplies the wall time by e^(R/M): here R = M.
  CHECK(exasim::models::expected_goodput({3600, 0, 3600}, 3600) ==
        exasim::testing::approx(1 / (std::exp(1.0) * (std::exp(1.0) - 1))).epsilon(1e-12));
  // A job that never fails spends interval / (interval + checkpoint) on work.
  CHECK(exasim::models::expected_goodput({1e12, 60, 600}, 1800) == exasim::testing::approx(1800.0 / 1860).epsilon(1e-6));
  // First order for rare failures: tau / (tau + d) (1 - (tau + d) / 2M - R / M), the expansion of
  // Daly's form; the terms left out are below 1e-7 here.
  const CheckpointedJob job{1e6, 10, 100};
  const double tau = 1000;
  CHECK(exasim::models::expected_goodput(job, tau) ==
        exasim::testing::approx(tau / (tau + 10) * (1 - (tau + 10) / 2e6 - 100 / 1e6)).epsilon(1e-6));
}

TEST_CASE("checkpoint interval: the optimum agrees with Young and Daly within 2 percent") {
  for (double mtbf : {1800.0, 3 * 3600.0, 24 * 3600.0}) {
    for (double checkpoint : {5.0, 30.0, 120.0, 300.0}) {
      for (double restart : {0.0, 900.0}) {
        CAPTURE(mtbf);
        CAPTURE(checkpoint);
        CAPTURE(restart);
        const CheckpointedJob job{mtbf, checkpoint, restart};
        const double best = exasim::models::optimal_interval(job);
        // Daly's higher-order estimate: within 2% while a checkpoint is short against the MTBF.
        CHECK(best == exasim::testing::approx(exasim::models::daly_interval(job)).epsilon(0.02));
        // Young's first order: within 2% only while d / M is tiny (it is long by about 2 sqrt(d / 2M) / 3).
        if (checkpoint / mtbf < 1e-3) CHECK(best == exasim::testing::approx(exasim::models::young_interval(job)).epsilon(0.02));
        // The restart does not move the optimum (e^(R/M) scales every interval alike).
        CHECK(best == exasim::testing::approx(exasim::models::optimal_interval({mtbf, checkpoint, 0})).epsilon(1e-6));
        // And it is a maximum: 10% either side is worse.
        const double at_best = exasim::models::expected_goodput(job, best);
        CHECK(at_best > exasim::models::expected_goodput(job, best * 1.1));
        CHECK(at_best > exasim::models::expected_goodput(job, best / 1.1));
      }
    }
  }
}
