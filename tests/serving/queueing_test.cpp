// Batch size 1, Poisson arrivals, fixed-length requests: each request occupies the replica for the
// same service time S (one prefill and a fixed number of decode steps), so the replica is an
// M/D/1 queue and its mean wait is Pollaczek-Khinchine's  W = rho S / (2 (1 - rho)),  rho = lambda S.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "serving_fixture.hpp"

namespace {

using namespace exasim;

// Service time of one request alone, measured by the simulator itself (arrival -> last token).
double service_time(const workloads::Scenario& s, std::int64_t prompt, std::int64_t output) {
  testing::ListSource one({testing::request(0, 0, prompt, output)});
  return testing::run_serving(s, one).e2e.mean;
}

}  // namespace

TEST_CASE("serving: M/D/1 mean wait matches Pollaczek-Khinchine") {
  const auto s = testing::serving_scenario("  replicas: 1\n  max_num_seqs: 1\n");
  const std::int64_t prompt = 64, output = 2;
  const double S = service_time(s, prompt, output);
  for (const double rho : {0.5, 0.8}) {
    CAPTURE(rho);
    const double lambda = rho / S;
    testing::PoissonSource src(lambda, 200000, prompt, output, 7);
    const auto r = testing::run_serving(s, src);
    const double theory = rho * S / (2 * (1 - rho));
    CHECK(r.completed == 200000);
    // Every request waits, then runs exactly S: TTFT - queueing is the prefill, E2E - wait = S.
    CHECK(r.e2e.mean - r.queueing.mean == exasim::testing::approx(S).epsilon(1e-9));
    CHECK(r.queueing.mean == exasim::testing::approx(theory).epsilon(0.05));
    // Utilization: the replica is busy a share rho of the time.
    CHECK(r.pools[0].busy_fraction == exasim::testing::approx(rho).epsilon(0.02));
  }
}
