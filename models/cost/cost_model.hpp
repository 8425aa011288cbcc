#pragma once
// Running cost: rented GPU-hours plus the electricity the cluster draws at the facility (IT power
// times PUE). Set electricity to 0 when the GPU-hour price already includes power.
namespace exasim::models {

struct CostRates {
  double gpu_hour_usd = 0;
  double electricity_usd_per_kwh = 0;
  double pue = 1.0;  // facility power / IT power
};

struct CostSummary {
  double usd_per_hour = 0;
  double usd_per_million_tokens = 0;
};

// it_power_w: average IT power of the whole cluster; tokens_per_s: cluster throughput.
CostSummary running_cost(const CostRates& rates, int gpus, double it_power_w, double tokens_per_s);

}  // namespace exasim::models
