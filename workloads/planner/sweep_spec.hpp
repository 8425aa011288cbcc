#pragma once
// A sweep file (`exasim sweep SWEEP.yaml`): a base scenario and the overrides that make each
// point, as a grid (every combination; the first key varies slowest) and/or a list of points.
// Keys are any dotted scenario keys, with the semantics of `--set`.
//   name: gpt3-micro-batch
//   base: ../scenarios/gpt3-175b-a100-1024.yaml   # relative to this file
//   set: {simulation.fidelity: analytical}         # applied to every point (optional)
//   grid:
//     training.micro_batch: [1, 2]
//     power.gpu_cap: [400 W, 300 W]
//   points:                                        # optional; after the grid
//     - {training.parallelism.tp: 4, training.parallelism.pp: 32}
//   columns: [iteration_time_s, tokens_per_s, power.avg_w]   # CSV metrics (dotted paths into the run JSON)
#include <string>
#include <utility>
#include <vector>

#include "hw/config/node.hpp"

namespace exasim::workloads::planner {

struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> set;  // key, value as YAML text, in order
  std::vector<std::string> overrides() const;            // "key=value" for load_scenario
};

struct SweepSpec {
  std::string name;
  std::string base;                   // scenario path, resolved against the sweep file's folder
  std::vector<std::string> keys;      // every key a point sets (grid keys first), for columns
  std::vector<SweepPoint> points;
  std::vector<std::string> columns;   // metrics; empty: the defaults of the scenario kind
};

// Reads and expands a sweep file. Throws ConfigError / IoError naming file, line and key.
SweepSpec load_sweep(const std::string& path);

// Default CSV metric columns for training and for serving results.
const std::vector<std::string>& default_training_columns();
const std::vector<std::string>& default_serving_columns();

}  // namespace exasim::workloads::planner
