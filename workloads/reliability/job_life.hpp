#pragma once
// What the Monte Carlo of a job's life takes and gives (workloads/reliability/goodput.hpp runs
// it; elastic_job.hpp is the elastic variant).
#include <cstdint>
#include <optional>

#include "models/reliability/checkpoint_interval.hpp"

namespace exasim::workloads::reliability {

// An elastic job: a failure takes its data-parallel replica out until repaired; the others go on.
struct ElasticJob {
  int replicas = 1;          // data-parallel replicas, each holding whole model states
  double repair_s = 0;       // until a failed replica's devices are back
  double reconfigure_s = 0;  // the whole job paused when a replica leaves or rejoins
  double iteration_s = 0;    // a failure loses the iteration in progress (half of one on average)
};

struct GoodputInputs {
  models::CheckpointedJob job;
  double interval_s = 0;          // work between checkpoints
  double upload_s = 0;            // asynchronous: after its blocking write, until a checkpoint is durable (<= interval)
  std::optional<double> work_s;   // run until this much work is kept; else for horizon_s
  double horizon_s = 0;
  int trials = 1;
  std::uint64_t seed = 1;
  std::optional<ElasticJob> elastic;
};

// Where a trial's wall-clock time went (seconds; the parts sum to the wall time).
struct TimeSplit {
  double useful = 0;      // work that was kept
  double checkpoint = 0;  // completed checkpoint writes
  double lost = 0;        // work and checkpoint writes a failure threw away
  double restart = 0;     // restarts (elastic: pauses to reconfigure), including interrupted ones
  double degraded = 0;    // elastic: the capacity of the replicas out for repair
  double wall() const { return useful + checkpoint + lost + restart + degraded; }
};

struct Trial {
  TimeSplit split;
  long long interruptions = 0;
};

}  // namespace exasim::workloads::reliability
