#include "models/cost/cost_config.hpp"

namespace exasim::models {

namespace {

using config::Node;

double money(const Node& v) {
  const double x = v.as_number();
  if (x < 0) v.fail("a price must not be negative");
  return x;
}

OwnedHardware read_owned(const Node& n) {
  n.expect_map();
  n.check_keys({"gpu_usd", "server_usd_per_gpu", "network_usd_per_gpu", "lifetime_years", "opex_usd_per_gpu_year"});
  OwnedHardware o;
  o.gpu_usd = money(n.required("gpu_usd"));
  if (n.has("server_usd_per_gpu")) o.server_usd_per_gpu = money(n["server_usd_per_gpu"]);
  if (n.has("network_usd_per_gpu")) o.network_usd_per_gpu = money(n["network_usd_per_gpu"]);
  if (n.has("opex_usd_per_gpu_year")) o.opex_usd_per_gpu_year = money(n["opex_usd_per_gpu_year"]);
  if (n.has("lifetime_years")) {
    o.lifetime_years = n["lifetime_years"].as_number();
    if (o.lifetime_years <= 0) n["lifetime_years"].fail("the amortization lifetime must be positive", "typical: 3 to 6 years");
  }
  return o;
}

}  // namespace

const std::vector<std::string>& cost_keys() {
  static const std::vector<std::string> keys = {"gpu_hour_usd", "electricity_usd_per_kwh", "pue", "owned", "training_tokens"};
  return keys;
}

CostRates read_cost_rates(const Node& n) {
  n.expect_map();
  n.check_keys(cost_keys());
  CostRates c;
  if (n.has("gpu_hour_usd")) c.gpu_hour_usd = money(n["gpu_hour_usd"]);
  if (n.has("electricity_usd_per_kwh")) c.electricity_usd_per_kwh = money(n["electricity_usd_per_kwh"]);
  if (n.has("pue")) {
    c.pue = n["pue"].as_number();
    if (c.pue < 1) n["pue"].fail("PUE is facility power over IT power, at least 1");
  }
  if (n.has("owned")) {
    if (n.has("gpu_hour_usd"))
      n["owned"].fail("give either gpu_hour_usd (rented) or owned: (bought), not both", "remove one of them");
    c.owned = read_owned(n["owned"]);
  }
  if (n.has("training_tokens")) {
    c.training_tokens = n["training_tokens"].as_number();
    if (c.training_tokens <= 0) n["training_tokens"].fail("the token budget must be positive", "for example 15e12");
  }
  return c;
}

}  // namespace exasim::models
