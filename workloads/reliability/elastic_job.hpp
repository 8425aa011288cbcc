#pragma once
// An elastic data-parallel job under failures (Bamboo, Oobleck, ReCycle): a failure takes the
// data-parallel replica holding the failed device out until it is repaired; the other replicas
// keep the model's state and go on, carrying the whole batch, after a pause to reconfigure. Only
// when every replica is out is the state lost: the job then restarts from its last checkpoint.
//
// Assumptions, stated: the replicas fail independently at an equal share of the job's rate while
// they are in (their devices out are not counted); a failure loses the iteration in progress (half
// an iteration on average, taken as that); checkpoints cost the working replicas their share
// write / (interval + write) of the time (a fluid rate, not stalls at points in time); and the
// work since the last checkpoint, lost when every replica is out, is half an interval.
#include "workloads/reliability/job_life.hpp"
#include "workloads/serving/sampling.hpp"

namespace exasim::workloads::reliability {

Trial run_elastic_trial(const GoodputInputs& in, serving::Rng& rng);

// The expected fraction of wall time kept, to first order in the failure rate: each replica is out
// with probability p = x / (1 + x), x = D / (M R) (an alternating renewal process: in for M R on
// average, out for D), so the job runs at 1 - p of its speed, less the checkpoints' share; each of
// the lambda (1 - p) failures a second pauses the job twice (leave, rejoin) and loses half an
// iteration. When every replica can be out at once (p^R not small) it is not this form's regime.
double expected_elastic_goodput(const models::CheckpointedJob& job, double interval_s, const ElasticJob& e);

// The checkpoint interval that balances an elastic job's checkpoints against its rollbacks: Daly's
// optimum at the rate of failures that find every other replica out, p^(R-1) (1 - p) / M, at most a
// day of work (a job checkpoints at least daily; with many replicas that rate is ~0).
double elastic_optimal_interval(const models::CheckpointedJob& job, const ElasticJob& e);

}  // namespace exasim::workloads::reliability
