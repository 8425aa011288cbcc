#pragma once
// Fitting a node fabric's collective parameters (models/collective/collective_params.hpp) to
// measured collectives on one node (models/calibration/aic_nccl_table.hpp): every sample is
// predicted by the analytical backend on the node as the catalog describes it, so the fitted
// numbers are the ones scenarios on that node use, with NCCL's protocol and algorithm choice
// (Simple, LL128, LL; ring, NVLS, direct) made per size as in a simulation.
//
// Held out: whole message sizes (every op and group size at that size), a seeded fraction of
// them, predicted without refitting. Errors are reported per op and group size, by size class.
#include <array>
#include <string>
#include <vector>

#include "models/calibration/aic_nccl_table.hpp"
#include "models/calibration/least_squares.hpp"
#include "models/collective/collective_params.hpp"
#include "topologies/cluster.hpp"

namespace exasim::sim {

// The analytical backend's time for `s` on the first s.ranks GPUs of `node` (one node).
double predict_collective(const topologies::Cluster& node, const models::CollectiveParams& p,
                          const models::CollectiveSample& s);

// The parameters the samples on `node` can tell apart: the efficiency of the node's fabric
// (NVLink, xGMI or PCIe), of reductions where reducing ops were measured, of NVLS where the
// fabric has it, the step latency of each protocol and the per-call cost.
std::vector<std::string> collective_parameters_for(const topologies::Cluster& node,
                                                   const std::vector<models::CollectiveSample>& samples);

struct CollectiveFitOptions {
  double held_out_sizes = 0.25;  // fraction of message sizes held out (0: fit on all)
  unsigned split_seed = 1;
  int starts = 16;               // random starts within the parameters' ranges, beside `start`
  std::size_t samples_per_parameter = models::kSamplesPerParameter;  // require_samples_for_fit
  unsigned seed = 1;
  models::LeastSquaresOptions least_squares;
};

// Size classes of the error tables: < 64 KiB (latency), 64 KiB - 1 MiB, 1 - 16 MiB, >= 16 MiB
// (bandwidth), all.
inline constexpr std::array<const char*, 5> kCollectiveSizeClasses = {"<64KiB", "64KiB-1MiB", "1-16MiB", ">=16MiB", "all"};
struct CollectiveErrorRow {
  std::string group;  // "all_reduce x8", ..., "all"
  std::array<double, 5> mean_abs_error{};
  std::array<int, 5> count{};
};
// Mean |predicted / measured - 1| per op and group size (then per op, then all), by size class.
std::vector<CollectiveErrorRow> collective_errors(const topologies::Cluster& node, const models::CollectiveParams& p,
                                                  const std::vector<models::CollectiveSample>& samples);

struct CollectiveCalibration {
  models::CollectiveParams fitted;
  std::vector<std::string> fitted_names;
  std::vector<models::CollectiveSample> fit_set, held_out;
  double fit_error = 0;  // mean |pred/meas - 1| on the fit set
};

// Fits `names` (collective_parameters_for when empty) from `start`. Throws ConfigError when
// a sample needs more GPUs than the node has.
CollectiveCalibration calibrate_collectives(const topologies::Cluster& node, const models::CollectiveParams& start,
                                            const std::vector<models::CollectiveSample>& samples,
                                            const CollectiveFitOptions& options = {},
                                            std::vector<std::string> names = {});

}  // namespace exasim::sim
