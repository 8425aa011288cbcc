#pragma once
// When requests arrive: offline (all at t = 0), Poisson, gamma-renewal with a chosen coefficient of
// variation, and bursty on/off. A name -> factory table reads them from the workload mapping.
#include <memory>
#include <string>
#include <vector>

#include "hw/config/node.hpp"
#include "workloads/serving/sampling.hpp"

namespace exasim::workloads::serving {

class ArrivalProcess {
 public:
  virtual ~ArrivalProcess() = default;
  // The next arrival time in seconds from the start; never decreases. Randomness comes only
  // from `rng`, so a seeded engine gives the same sequence everywhere.
  virtual double next(Rng& rng) = 0;
  virtual std::string describe() const = 0;
};

// Every request at t = 0 (offline throughput benchmarks).
std::unique_ptr<ArrivalProcess> offline_arrivals();
// Exponential gaps with mean 1 / rate.
std::unique_ptr<ArrivalProcess> poisson_arrivals(double rate_per_s);
// Gamma gaps with mean 1 / rate and coefficient of variation cv (shape 1/cv^2): cv = 1 is
// Poisson, cv > 1 burstier, cv < 1 more regular.
std::unique_ptr<ArrivalProcess> gamma_arrivals(double rate_per_s, double cv);
// Interrupted Poisson process: ON and OFF periods with exponential lengths of the given means;
// Poisson arrivals during ON at rate * (on + off) / on, none during OFF, so the long-run rate is
// `rate_per_s`. Starts in ON with the stationary probability on / (on + off).
std::unique_ptr<ArrivalProcess> bursty_arrivals(double rate_per_s, double on_mean_s, double off_mean_s);

struct ArrivalKind {
  std::string name;
  std::string help;
  std::vector<std::string> keys;  // keys it reads beside `arrival:` in the workload mapping
  std::unique_ptr<ArrivalProcess> (*make)(const config::Node& workload);
};

// All registered arrival processes (for `help` and validation).
const std::vector<ArrivalKind>& arrival_processes();
// The process named by the `arrival` node; a ConfigError listing the names otherwise.
const ArrivalKind& find_arrival_process(const config::Node& arrival);
// Reads `arrival:` and its keys from `workload` (e.g. {arrival: gamma, rate_per_s: 8, cv: 2}).
std::unique_ptr<ArrivalProcess> make_arrival_process(const config::Node& workload);

}  // namespace exasim::workloads::serving
