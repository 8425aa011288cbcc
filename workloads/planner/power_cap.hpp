#pragma once
// A power limit applied to a simulated iteration: every kernel runs at the highest clock at which
// the GPU stays within the limit (models/power/dvfs.hpp), with the links' full power held in
// reserve so that no instant exceeds it. The default limit is TDP, which the calibrated kernel
// times already reflect: kernels keep their durations and report at most TDP. Under a lower cap
// kernels stretch by the part of their time the SM clock sets (estimated as their matrix share
// of matrix + HBM activity); the stretched graph is then run again by the engine, so the slower
// kernels move the whole schedule.
#include <vector>

#include "hw/dtype.hpp"
#include "hw/gpu_spec.hpp"
#include "models/power/dvfs.hpp"
#include "sim/exec_graph.hpp"

namespace exasim::workloads::planner {

struct CappedGraph {
  bool stretched = false;                // some kernel got slower: `graph` must be run again
  sim::ExecGraph graph;                  // when stretched: same devices, streams, tasks, edges; new durations
  std::vector<double> dynamic_w;         // per task: a compute task's power above idle
  double mean_clock = 1;                 // time-weighted over compute tasks
};

// cap_w <= 0 or >= TDP: the default limit (TDP). Throws ConfigError when cap_w is below what the
// lowest clock guarantees (power_cap_floor_w).
CappedGraph apply_power_cap(const sim::ExecGraph& graph, const hw::GpuSpec& gpu, DType precision, double cap_w,
                            const models::DvfsCurve& curve);

}  // namespace exasim::workloads::planner
