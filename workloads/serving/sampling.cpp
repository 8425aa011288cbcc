#include "workloads/serving/sampling.hpp"

#include <cmath>
#include <limits>
#include <numbers>

namespace exasim::workloads::serving {

double uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::int64_t uniform_int(Rng& rng, std::int64_t lo, std::int64_t hi) {
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (span == std::numeric_limits<std::uint64_t>::max()) return static_cast<std::int64_t>(rng());
  const std::uint64_t n = span + 1;
  // Largest multiple of n that fits: draws above it would favour the low residues.
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
  std::uint64_t x = rng();
  while (x >= limit) x = rng();
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + x % n);
}

double exponential(Rng& rng, double mean) {
  // 1 - u lies in (0, 1], so the log is finite.
  return -mean * std::log(1.0 - uniform01(rng));
}

double standard_normal(Rng& rng) {
  const double u1 = 1.0 - uniform01(rng);  // (0, 1]
  const double u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double gamma_unit(Rng& rng, double shape) {
  if (shape < 1.0) {
    const double u = 1.0 - uniform01(rng);  // (0, 1]
    return gamma_unit(rng, shape + 1.0) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0, v = 0;
    do {
      x = standard_normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - uniform01(rng);
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

}  // namespace exasim::workloads::serving
