#pragma once
// Running cost of a cluster: the hardware, rented by the GPU-hour or owned (capital cost
// amortized linearly over a stated lifetime plus stated operating cost), and the electricity the
// cluster draws at the facility (IT power x PUE). Set electricity to 0 when a GPU-hour price
// already includes power. Derived: $ per million tokens and $ for a training run to a token
// budget.
#include <optional>

namespace exasim::models {

inline constexpr double kHoursPerYear = 8766;  // 365.25 days

// Owned hardware, all per GPU so that any server size works (a server's price / its GPUs).
struct OwnedHardware {
  double gpu_usd = 0;              // the GPU itself
  double server_usd_per_gpu = 0;   // chassis, CPUs, memory, NICs, storage
  double network_usd_per_gpu = 0;  // switches, optics and cables
  double lifetime_years = 4;       // straight-line amortization
  double opex_usd_per_gpu_year = 0;  // maintenance, staff, space (energy counted separately)
  double capex_per_gpu() const { return gpu_usd + server_usd_per_gpu + network_usd_per_gpu; }
};

struct CostRates {
  double gpu_hour_usd = 0;
  double electricity_usd_per_kwh = 0;
  double pue = 1.0;  // facility power / IT power
  std::optional<OwnedHardware> owned;  // instead of gpu_hour_usd
  double training_tokens = 0;          // token budget of a training run; 0: not asked
};

struct CostSummary {
  double usd_per_hour = 0;
  double usd_per_million_tokens = 0;
  double hardware_usd_per_hour = 0;  // GPU-hours rented, or capex amortized + opex
  double energy_usd_per_hour = 0;
  double training_run_hours = 0;     // to rates.training_tokens at this throughput (0 if not asked)
  double training_run_usd = 0;
};

// Hardware cost of one GPU-hour: the rental price, or (capex / lifetime + opex per year) / hours.
double hardware_usd_per_gpu_hour(const CostRates& rates);

// it_power_w: average IT power of the whole cluster; tokens_per_s: cluster throughput.
CostSummary running_cost(const CostRates& rates, int gpus, double it_power_w, double tokens_per_s);

}  // namespace exasim::models
