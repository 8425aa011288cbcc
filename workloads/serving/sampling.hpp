#pragma once
// Random variates drawn from the raw 64-bit output of std::mt19937_64. The engine's output is fixed
// by the standard, but std::*_distribution algorithms differ between standard libraries, so every
// sampler the serving layer needs is written here: same seed, same numbers, on every platform.
#include <cstdint>
#include <random>

namespace exasim::workloads::serving {

using Rng = std::mt19937_64;

// Uniform on [0, 1): the top 53 bits of one draw.
double uniform01(Rng& rng);
// Uniform integer in [lo, hi] (inclusive), unbiased (rejection on the top of the range).
std::int64_t uniform_int(Rng& rng, std::int64_t lo, std::int64_t hi);
// Exponential with the given mean (inversion).
double exponential(Rng& rng, double mean);
// Standard normal (Box-Muller; two uniforms per draw, the second variate is discarded so that
// the sampler keeps no state between calls).
double standard_normal(Rng& rng);
// Gamma with shape k > 0 and scale 1 (Marsaglia & Tsang 2000; for k < 1 the boost
// Gamma(k) = Gamma(k + 1) * U^(1/k)).
double gamma_unit(Rng& rng, double shape);

}  // namespace exasim::workloads::serving
