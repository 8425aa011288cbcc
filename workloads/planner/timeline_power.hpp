#pragma once
// GPU power over a simulated timeline. Every device of the graph is one GPU; at any time its
// power is idle power plus the dynamic power of the kernel its compute stream runs (matrix
// activity = the kernel's FLOPs over duration x peak, HBM activity = its bytes over duration x
// bandwidth, vector = busy) plus link power for the collectives and sends in flight (bytes a GPU
// puts on the wire, nccl-tests bus factor, over duration x scale-up bandwidth; capped at full
// rate). The trace is piecewise constant, so energy is its exact integral.
#include <vector>

#include "hw/dtype.hpp"
#include "hw/gpu_spec.hpp"
#include "models/power/gpu_power.hpp"
#include "sim/exec_graph.hpp"
#include "sim/network_backend.hpp"
#include "sim/timeline.hpp"

namespace exasim::workloads::planner {

struct PowerSegment {
  double begin = 0, end = 0;  // s
  double watts = 0;
};

struct DevicePower {
  std::vector<PowerSegment> trace;  // covers [0, horizon] without gaps
  double energy_j = 0;
  double peak_w = 0;
  double average_w = 0;
  models::UnitActivity activity;    // time-averaged over [0, horizon]
};

// dynamic_w: per task (indexed by TaskId) a compute task's power above idle, as a power limit
// set it (power_cap.hpp); empty: task_dynamic_w() at the default limit (TDP). `devices`: only
// the graph's first that many devices (0: all), e.g. one rank per stage of an all-ranks graph.
std::vector<DevicePower> timeline_power(const sim::ExecGraph& graph, const std::vector<sim::CommOp>& ops,
                                        const sim::Timeline& timeline, const hw::GpuSpec& gpu, DType precision,
                                        double horizon, const std::vector<double>& dynamic_w = {},
                                        std::size_t devices = 0);

// A compute task's power above idle at the default power limit (TDP; links held in reserve).
double task_dynamic_w(const sim::Task& task, const hw::GpuSpec& gpu, DType precision);

// Mean power of one GPU over [0, horizon]: the devices' energies over devices x horizon.
double average_gpu_power_w(const sim::ExecGraph& graph, const std::vector<sim::CommOp>& ops, const sim::Timeline& timeline,
                           const hw::GpuSpec& gpu, DType precision, double horizon);

// The unit activity of a compute task at the top clock.
models::UnitActivity task_activity(const sim::Task& task, const hw::GpuSpec& gpu, DType precision);
// Bytes one GPU of a communication puts on its links.
double wire_bytes(const sim::CommOp& op);

}  // namespace exasim::workloads::planner
