#pragma once
// A scenario's `reliability:` section (DESIGN.md "Interface added in 2026-12"): how often the job
// is interrupted, what a checkpoint and a restart cost, and over what the goodput is measured.
//
//   reliability:
//     job_mtbf: 3 h               # the whole job's mean time between interruptions
//     checkpoint: {interval: optimal, write_time: 20 s}   # interval: optimal or a time of work
//     restart_time: 15 min        # detection, rescheduling, start-up, checkpoint load
//     horizon: 30 d               # wall-clock time simulated (without tokens:)
//     tokens: 15.6e12             # or: a token budget, giving the time to train it
//     trials: 100                 # Monte Carlo trials
//     seed: 1                     # default: simulation.seed
#include <cstdint>
#include <optional>

#include "hw/config/node.hpp"

namespace exasim::workloads::reliability {

struct ReliabilityConfig {
  double job_mtbf_s = 0;
  std::optional<double> checkpoint_interval_s;  // of work between checkpoints; empty: optimal
  double checkpoint_write_s = 0;                // time a checkpoint blocks training
  double restart_s = 0;
  double horizon_s = 30 * 86400.0;
  std::optional<double> train_tokens;  // a budget: the job runs until it is trained
  int trials = 100;
  std::optional<std::uint64_t> seed;  // empty: the scenario's simulation.seed
};

// Reads and checks the section. Throws ConfigError naming the file, line and key.
ReliabilityConfig read_reliability(const config::Node& n);

}  // namespace exasim::workloads::reliability
