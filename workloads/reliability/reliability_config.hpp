#pragma once
// A scenario's `reliability:` section (DESIGN.md "Interface added in 2026-12"): how often the job
// is interrupted, what a checkpoint and a restart cost, and over what the goodput is measured.
// Each cost is given directly or from the parts that make it:
//
//   reliability:
//     failures: llama3-h100       # component rates (configs/hw/failures.yaml) x the job's devices;
//     job_mtbf: 3 h               #   or the whole job's mean time between interruptions
//     storage: tectonic-llama3    # configs/hw/storage.yaml: the checkpoint's write and load times
//     checkpoint: {interval: optimal, write_time: 20 s}   # interval: optimal or a time of work;
//                                 #   write_time: what a checkpoint blocks (default: from storage);
//                                 #   mode: async: the write is the copy to host memory, then an
//                                 #   upload_time (default: from storage) overlapped with training
//     restart: {detection: 5 min, reschedule: 3 min, startup: 10 min}  # + the load from storage;
//     restart_time: 15 min        #   or the whole restart
//     elastic: {repair_time: 4 h, reconfigure_time: 2 min}  # a failure takes its data-parallel
//                                 #   replica out until repaired; the others go on (elastic_job.hpp)
//     horizon: 30 d               # wall-clock time simulated; or
//     tokens: 15.6e12             #   a token budget, giving the time to train it
//     trials: 100                 # Monte Carlo trials
//     seed: 1                     # default: simulation.seed
#include <cstdint>
#include <optional>

#include "hw/catalog.hpp"
#include "hw/config/node.hpp"

namespace exasim::workloads::reliability {

// A restart after an interruption, before the checkpoint is read back.
struct RestartParts {
  double detection_s = 0;   // until the job is known to have stopped (collective timeout, health checks)
  double reschedule_s = 0;  // replacing the failed node (or taking a hot spare) and relaunching
  double startup_s = 0;     // process start, communicator set-up, data loader, compilation
};

struct ElasticConfig {
  double repair_s = 0;       // until a failed replica's devices are back
  double reconfigure_s = 0;  // the job paused when a replica leaves or rejoins
};

struct ReliabilityConfig {
  std::optional<double> job_mtbf_s;             // given; else from failures
  std::optional<hw::FailureRatesSpec> failures;
  std::optional<hw::StorageSpec> storage;
  std::optional<double> checkpoint_interval_s;  // of work between checkpoints; empty: optimal
  std::optional<double> checkpoint_write_s;     // given; else from storage
  bool checkpoint_async = false;                // the write stalls; the upload overlaps training
  std::optional<double> checkpoint_upload_s;    // async: given; else from storage
  std::optional<double> restart_s;              // given (restart_time); else restart parts + load
  std::optional<RestartParts> restart;
  std::optional<ElasticConfig> elastic;
  double horizon_s = 30 * 86400.0;
  std::optional<double> train_tokens;  // a budget: the job runs until it is trained
  int trials = 100;
  std::optional<std::uint64_t> seed;  // empty: the scenario's simulation.seed
};

// Reads and checks the section. Throws ConfigError naming the file, line and key.
ReliabilityConfig read_reliability(const config::Node& n, const hw::Catalog& catalog);

}  // namespace exasim::workloads::reliability
