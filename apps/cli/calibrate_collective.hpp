#pragma once
// The collective branch of `exasim calibrate` for AIConfigurator NCCL tables (kernels-aic/<gpu>/
// nccl_perf.csv, and custom_allreduce_perf.csv: the serving engine's own all-reduce): fits the node fabric's collective parameters (sim/net/collective_calibration.hpp)
// with whole message sizes held out, prints the parameters and the errors per op, group size and
// size class before and after, and writes the `collective:` calibration file.
#include <ostream>
#include <string>

#include "apps/cli/commands.hpp"

namespace exasim::cli {

struct CollectiveCalibrateRequest {
  std::vector<std::string> tables;  // nccl_perf.csv, and custom_allreduce_perf.csv of the same folder
  std::string node;      // catalog node; empty: the server the table's GPU comes in
  std::string output;    // empty: configs/calibration/<node>-aic-nccl.yaml
  std::string date;      // YYYY-MM-DD
  double held_out_sizes = 0.25;
  int starts = 16;
  std::string evaluate;  // a calibration file to predict the tables with (nothing fitted); empty: fit
};

int calibrate_collective_table(const Context& ctx, const CollectiveCalibrateRequest& r, std::ostream& out);

}  // namespace exasim::cli
