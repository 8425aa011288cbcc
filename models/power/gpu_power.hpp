#pragma once
// GPU power from the activity of its units. Power = idle + the dynamic power of the matrix units
// (Tensor/Matrix Cores), the vector units and SM control, HBM and the scale-up links, each scaled
// by how busy it is; clocks below the top scale matrix and vector power by f V^2 (dvfs.hpp).
// Anchor: a sustained dense GEMM (matrix units at 80% of peak, HBM at 20%, every SM busy) draws
// exactly TDP at the top clock, as large GEMMs on A100 and H100 run at their power limit. Busier
// units would draw more: the GPU's power limit (TDP by default, or a cap) then lowers the clock
// (dvfs.hpp). The split between the units is an estimate; power_split names each source.
#include "hw/gpu_spec.hpp"

namespace exasim::models {

// Dynamic power of each unit at full activity and the top clock, W (their sum exceeds TDP - idle).
struct GpuPowerSplit {
  double matrix_w = 0;
  double vector_w = 0;  // vector units, register files, schedulers and caches of a busy SM
  double hbm_w = 0;
  double link_w = 0;    // NVLink / xGMI SerDes, both directions at line rate
  double total() const { return matrix_w + vector_w + hbm_w + link_w; }
};

// How busy each unit is, as fractions of its full-clock capacity, each in [0, 1].
struct UnitActivity {
  double matrix = 0;  // achieved FLOP/s / dense peak FLOP/s (of the job's precision)
  double vector = 0;  // fraction of time a kernel occupies the SMs
  double hbm = 0;     // achieved HBM bytes/s / HBM bandwidth
  double link = 0;    // bytes/s on the scale-up links / their bandwidth (one direction)
};

// A clock operating point: frequency and voltage relative to the top (boost) clock.
struct ClockPoint {
  double frequency = 1;  // f / f_max
  double voltage = 1;    // V(f) / V(f_max)
};

// The anchor: matrix and HBM activity of a sustained dense GEMM (estimate: cuBLAS reaches 75-85%
// of the datasheet dense peak on large BF16 GEMMs on A100/H100; a tiled GEMM reads its operands
// from HBM at a fraction of its bandwidth).
inline constexpr UnitActivity kDenseGemm{0.8, 1.0, 0.2, 0.0};

GpuPowerSplit power_split(const hw::GpuSpec& gpu);

// Power (W) at `activity`, before any power limit. Matrix activity is measured against the
// full-clock peak, so its power scales with V^2 only (energy per FLOP); vector activity is a busy
// fraction, whose power scales with f V^2. HBM and links keep their own clocks.
double gpu_power_w(const hw::GpuSpec& gpu, const UnitActivity& activity, ClockPoint clock = {});

// First-order form kept for callers that know only a busy fraction: idle + utilization x
// (TDP - idle), utilization in [0, 1].
double gpu_power_w(const hw::GpuSpec& gpu, double utilization);

}  // namespace exasim::models
