#include "models/cost/cost_model.hpp"

namespace exasim::models {

double hardware_usd_per_gpu_hour(const CostRates& r) {
  if (!r.owned) return r.gpu_hour_usd;
  const OwnedHardware& o = *r.owned;
  return (o.capex_per_gpu() / o.lifetime_years + o.opex_usd_per_gpu_year) / kHoursPerYear;
}

CostSummary running_cost(const CostRates& r, int gpus, double it_power_w, double tokens_per_s) {
  CostSummary c;
  c.hardware_usd_per_hour = gpus * hardware_usd_per_gpu_hour(r);
  c.energy_usd_per_hour = it_power_w / 1000.0 * r.pue * r.electricity_usd_per_kwh;
  c.usd_per_hour = c.hardware_usd_per_hour + c.energy_usd_per_hour;
  const double tokens_per_hour = tokens_per_s * 3600.0;
  c.usd_per_million_tokens = tokens_per_hour > 0 ? c.usd_per_hour / tokens_per_hour * 1e6 : 0;
  if (r.training_tokens > 0 && tokens_per_hour > 0) {
    c.training_run_hours = r.training_tokens / tokens_per_hour;
    c.training_run_usd = c.training_run_hours * c.usd_per_hour;
  }
  return c;
}

}  // namespace exasim::models
