#pragma once
// Dynamic voltage and frequency scaling under a power cap. The voltage a clock needs follows a
// curve that is flat at the lowest clocks (the voltage floor) and rises linearly to the top
// clock; dynamic power goes as f V^2, so the last clock steps cost the most power. A cap below
// what a kernel draws at the top clock makes the GPU run it at the highest clock that fits.
#include "models/power/gpu_power.hpp"

namespace exasim::models {

// The curve V(f) / V(f_max) over f / f_max: constant voltage_floor up to knee, then linear to 1.
// Defaults (estimates): the lowest application clock is ~15% of boost (A100: 210 of 1410 MHz,
// nvidia-smi -q -d SUPPORTED_CLOCKS); voltage stays at ~70% of its top value up to about half
// the boost clock (Guerreiro et al., "GPU static and dynamic power modeling using DVFS", 2019,
// measured V-f tables of Pascal/Volta GPUs).
struct DvfsCurve {
  double min_frequency = 0.15;
  double knee = 0.5;
  double voltage_floor = 0.70;
  ClockPoint at(double frequency) const;
};

// A kernel as the cap sees it: its activity and how much of its time the SM clock sets.
struct KernelActivity {
  UnitActivity activity;    // at the top clock
  double clock_bound = 1;   // fraction of its duration that scales with 1 / f (compute-bound part)
};

struct CappedKernel {
  ClockPoint clock;
  double time_factor = 1;   // duration at this clock / duration at the top clock
  double power_w = 0;       // its power at this clock
};

// The highest clock at which the kernel's power stays within budget_w (bisection to 1e-6 of the
// clock range). Stretching a kernel lowers its activity per second: matrix, vector and HBM rates
// divide by time_factor. When even the lowest clock exceeds the budget the result reports that
// clock and its power (callers reject such caps; see power_cap_floor_w).
CappedKernel cap_kernel(const hw::GpuSpec& gpu, const KernelActivity& k, double budget_w, const DvfsCurve& curve = {});

// The power of the busiest possible kernel (every unit at full activity) at the lowest clock plus
// links at full rate: any cap at or above it can be met by lowering clocks.
double power_cap_floor_w(const hw::GpuSpec& gpu, const DvfsCurve& curve = {});

// A kernel whose simulated duration is its time at the GPU's default limit (TDP): the kernel
// models are calibrated on measured runs, which include any throttling at TDP. Under a power
// limit `limit_w` (<= TDP; links' `reserve_w` kept free) it runs at the clock that fits, its
// duration times time_factor = (time factor at the limit) / (time factor at TDP), never below 1.
CappedKernel limit_kernel(const hw::GpuSpec& gpu, const KernelActivity& k, double limit_w, double reserve_w,
                          const DvfsCurve& curve = {});

}  // namespace exasim::models
