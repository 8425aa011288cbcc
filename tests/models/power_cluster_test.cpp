// Cluster power and the facility what-if against hand calculations.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "models/power/cluster_power.hpp"
#include "models/power/power_config.hpp"

using namespace exasim;
using namespace exasim::models;

TEST_CASE("cluster power: GPUs, the rest of the nodes, switches, PUE") {
  // 16 nodes x 8 GPUs at 300 W, 1650 W per node besides GPUs, 40 switch ports of 200 Gb/s.
  const ClusterPower p = cluster_power({128, 16, 300, 1650, 40 * 200.0, 1.2});
  CHECK(p.gpus_w == exasim::testing::approx(128 * 300));
  CHECK(p.nodes_other_w == exasim::testing::approx(16 * 1650));
  CHECK(p.switches_w == exasim::testing::approx(40 * 200 * 0.03));  // 6 W per 200G port
  CHECK(p.it_w == exasim::testing::approx(38400 + 26400 + 240));
  CHECK(p.facility_w == exasim::testing::approx(1.2 * (38400 + 26400 + 240)));
}

TEST_CASE("servers within a facility budget, provisioned at the GPU cap") {
  // DGX H100-like: 8 x 700 W + 2300 W + 100 W of switch share, PUE 1.25 -> 10 kW per server.
  ServerProvision s{8, 700, 2300, 100, 1.25};
  CHECK(s.facility_w() == exasim::testing::approx(10000));
  CHECK(servers_within_budget(1e6, s) == 100);
  CHECK(servers_within_budget(999999, s) == 99);
  s.gpu_limit_w = 450;  // capped: 8 x 450 + 2400 = 6000 x 1.25 = 7500 W
  CHECK(servers_within_budget(1e6, s) == 133);
  CHECK(servers_within_budget(0, s) == 0);
}

TEST_CASE("power section of a scenario") {
  const auto n = config::load_string("{gpu_cap: 500 W, facility_budget: 20 MW, whatif_caps: [700 W, 400 W]}", "<test>");
  const PowerConfig c = read_power_config(n);
  CHECK(c.gpu_cap_w == 500);
  CHECK(c.facility_budget_w == 20e6);
  CHECK(whatif_caps(c, 700) == std::vector<double>{700, 400});
  CHECK(whatif_caps(PowerConfig{}, 700).size() == 6);  // TDP down to 50% in 10% steps
  CHECK_THROWS_AS(read_power_config(config::load_string("{gpu_cap: -5 W}", "<test>")), ConfigError);
  CHECK_THROWS_AS(read_power_config(config::load_string("{gpu_capp: 5 W}", "<test>")), ConfigError);
}
