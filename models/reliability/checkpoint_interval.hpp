#pragma once
// A checkpointed job under exponential failures, in closed form (Young 1974, Daly 2006).
// The job computes `interval` seconds of useful work, then blocks `checkpoint` seconds writing a
// checkpoint; a failure (anywhere: in work, in a checkpoint, in a restart) costs a restart of
// `restart` seconds and the work since the last completed checkpoint. Failures arrive as a
// Poisson process of mean spacing `mtbf`. Under these assumptions Daly's expected wall time is
// exact; the Monte Carlo of workloads/reliability/ simulates the same job event by event.
namespace exasim::models {

struct CheckpointedJob {
  double mtbf_s = 0;        // mean time between the job's interruptions (> 0)
  double checkpoint_s = 0;  // time a checkpoint blocks training (>= 0)
  double restart_s = 0;     // detection, rescheduling, start-up and checkpoint load (>= 0)
};

// Expected fraction of wall-clock time spent on work that is kept, checkpointing every
// `interval_s` of work: interval / (M e^(R/M) (e^((interval + checkpoint)/M) - 1)) (Daly 2006, the
// expected wall time of a job over the work it does).
double expected_goodput(const CheckpointedJob& job, double interval_s);

// Young's first-order optimum, sqrt(2 checkpoint M).
double young_interval(const CheckpointedJob& job);
// Daly's higher-order estimate of the optimum (2006): sqrt(2dM)(1 + sqrt(d/2M)/3 + d/18M) - d
// for d < 2M, else M.
double daly_interval(const CheckpointedJob& job);
// The interval that maximizes expected_goodput (golden-section search on its logarithm; the
// goodput is unimodal in the interval). What the job uses when asked for `optimal`.
double optimal_interval(const CheckpointedJob& job);

}  // namespace exasim::models
