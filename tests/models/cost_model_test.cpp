// Running cost against hand calculations: rented GPU-hours, owned hardware amortized, energy at
// PUE, $ per million tokens and per training run.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "models/cost/cost_config.hpp"
#include "models/cost/cost_model.hpp"

using namespace exasim;
using namespace exasim::models;

TEST_CASE("cloud: GPU-hours plus facility electricity") {
  CostRates r;
  r.gpu_hour_usd = 2.0;
  r.electricity_usd_per_kwh = 0.10;
  r.pue = 1.2;
  r.training_tokens = 1e12;
  // 1024 GPUs: $2048/h; 650 kW IT x 1.2 = 780 kW x $0.10 = $78/h. 150k tokens/s = 540M tokens/h.
  const CostSummary c = running_cost(r, 1024, 650e3, 150e3);
  CHECK(c.hardware_usd_per_hour == exasim::testing::approx(2048));
  CHECK(c.energy_usd_per_hour == exasim::testing::approx(78));
  CHECK(c.usd_per_hour == exasim::testing::approx(2126));
  CHECK(c.usd_per_million_tokens == exasim::testing::approx(2126 / 540.0));
  CHECK(c.training_run_hours == exasim::testing::approx(1e12 / 540e6));
  CHECK(c.training_run_usd == exasim::testing::approx(1e12 / 540e6 * 2126));
}

TEST_CASE("owned: capex over the lifetime plus opex, per GPU") {
  const auto n = config::load_string(R"({owned: {gpu_usd: 25000, server_usd_per_gpu: 15000, network_usd_per_gpu: 4000,
                                                  lifetime_years: 4, opex_usd_per_gpu_year: 1500},
                                         electricity_usd_per_kwh: 0.08, pue: 1.3, training_tokens: 15e12})", "<test>");
  const CostRates r = read_cost_rates(n);
  REQUIRE(r.owned);
  // (44000 / 4 + 1500) / 8766 h = 12500 / 8766 = $1.426 per GPU-hour.
  CHECK(hardware_usd_per_gpu_hour(r) == exasim::testing::approx(12500.0 / 8766));
  const CostSummary c = running_cost(r, 16384, 25e6, 2.0e6);
  CHECK(c.hardware_usd_per_hour == exasim::testing::approx(16384 * 12500.0 / 8766));
  CHECK(c.energy_usd_per_hour == exasim::testing::approx(25e3 * 1.3 * 0.08));
  CHECK(c.training_run_hours == exasim::testing::approx(15e12 / (2.0e6 * 3600)));
}

TEST_CASE("the cost section keeps its old keys and rejects mixed pricing") {
  const CostRates r = read_cost_rates(config::load_string("{gpu_hour_usd: 2.0, electricity_usd_per_kwh: 0.10, pue: 1.2}", "<t>"));
  CHECK(r.gpu_hour_usd == 2.0);
  CHECK_FALSE(r.owned);
  CHECK_THROWS_AS(read_cost_rates(config::load_string("{gpu_hour_usd: 2, owned: {gpu_usd: 1}}", "<t>")), ConfigError);
  CHECK_THROWS_AS(read_cost_rates(config::load_string("{pue: 0.9}", "<t>")), ConfigError);
  CHECK_THROWS_AS(read_cost_rates(config::load_string("{owned: {gpu_usd: 1, lifetime_years: 0}}", "<t>")), ConfigError);
  CHECK(running_cost({}, 8, 1000, 0).usd_per_million_tokens == 0);  // no throughput: no per-token cost
}
