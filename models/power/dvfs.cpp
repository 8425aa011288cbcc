#include "models/power/dvfs.hpp"

#include <algorithm>

namespace exasim::models {

ClockPoint DvfsCurve::at(double frequency) const {
  const double f = std::clamp(frequency, min_frequency, 1.0);
  const double v = f <= knee ? voltage_floor : voltage_floor + (1 - voltage_floor) * (f - knee) / (1 - knee);
  return {f, v};
}

namespace {

CappedKernel at_clock(const hw::GpuSpec& gpu, const KernelActivity& k, const DvfsCurve& curve, double f) {
  CappedKernel c;
  c.clock = curve.at(f);
  // Matrix units busy a fraction m of the time at the top clock set at least that much of it.
  const double bound = std::clamp(std::max(k.clock_bound, k.activity.matrix), 0.0, 1.0);
  c.time_factor = bound / c.clock.frequency + (1 - bound);
  UnitActivity a = k.activity;
  a.matrix /= c.time_factor;
  a.hbm /= c.time_factor;
  // The SMs stay busy for the whole (longer) kernel: vector activity is a busy fraction.
  c.power_w = gpu_power_w(gpu, a, c.clock);
  return c;
}

}  // namespace

CappedKernel cap_kernel(const hw::GpuSpec& gpu, const KernelActivity& k, double budget_w, const DvfsCurve& curve) {
  const CappedKernel top = at_clock(gpu, k, curve, 1.0);
  if (top.power_w <= budget_w) return top;
  double lo = curve.min_frequency, hi = 1.0;
  CappedKernel best = at_clock(gpu, k, curve, lo);
  if (best.power_w > budget_w) return best;
  // Power rises with the clock (f V^2 grows faster than the activity falls), so bisect.
  while (hi - lo > 1e-6) {
    const double mid = 0.5 * (lo + hi);
    const CappedKernel c = at_clock(gpu, k, curve, mid);
    if (c.power_w <= budget_w) {
      lo = mid;
      best = c;
    } else {
      hi = mid;
    }
  }
  return best;
}

double power_cap_floor_w(const hw::GpuSpec& gpu, const DvfsCurve& curve) {
  const GpuPowerSplit s = power_split(gpu);
  const ClockPoint c = curve.at(curve.min_frequency);
  return gpu.idle_power_w + (s.matrix_w + s.vector_w) * c.frequency * c.voltage * c.voltage + s.hbm_w + s.link_w;
}

CappedKernel limit_kernel(const hw::GpuSpec& gpu, const KernelActivity& k, double limit_w, double reserve_w,
                          const DvfsCurve& curve) {
  const CappedKernel at_tdp = cap_kernel(gpu, k, gpu.tdp_w - reserve_w, curve);
  if (limit_w >= gpu.tdp_w) return {at_tdp.clock, 1.0, at_tdp.power_w};
  CappedKernel c = cap_kernel(gpu, k, limit_w - reserve_w, curve);
  c.time_factor = std::max(1.0, c.time_factor / at_tdp.time_factor);
  return c;
}

}  // namespace exasim::models
