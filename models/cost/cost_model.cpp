#include "models/cost/cost_model.hpp"

namespace exasim::models {

CostSummary running_cost(const CostRates& r, int gpus, double it_power_w, double tokens_per_s) {
  CostSummary c;
  c.usd_per_hour = gpus * r.gpu_hour_usd + it_power_w / 1000.0 * r.pue * r.electricity_usd_per_kwh;
  const double tokens_per_hour = tokens_per_s * 3600.0;
  c.usd_per_million_tokens = tokens_per_hour > 0 ? c.usd_per_hour / tokens_per_hour * 1e6 : 0;
  return c;
}

}  // namespace exasim::models
