#pragma once
// The scenario's `cost:` section.
//   cost:
//     gpu_hour_usd: 2.0              # cloud price per GPU-hour, or instead:
//     owned: {gpu_usd: 25000, server_usd_per_gpu: 15000, network_usd_per_gpu: 4000,
//             lifetime_years: 4, opex_usd_per_gpu_year: 1500}
//     electricity_usd_per_kwh: 0.10
//     pue: 1.2
//     training_tokens: 15e12         # $ and hours for a training run to this many tokens
#include <string>
#include <vector>

#include "hw/config/node.hpp"
#include "models/cost/cost_model.hpp"

namespace exasim::models {

// The keys `cost:` accepts.
const std::vector<std::string>& cost_keys();
// Reads a `cost:` mapping; throws ConfigError naming the key.
CostRates read_cost_rates(const config::Node& n);

}  // namespace exasim::models
