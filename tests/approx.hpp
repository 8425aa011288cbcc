#pragma once
// Relative comparison for the tests. doctest::Approx accepts |a - b| < epsilon x (scale +
// max(|a|, |b|)) with scale 1 by default: for quantities far below one (a kernel's seconds, a
// fraction) that is an absolute tolerance of about epsilon, not a relative one, and a check of a
// 3 ms kernel "within 5%" would accept anything within 50 ms. approx() sets scale 0: epsilon is
// relative to the larger of the two values (doctest's default epsilon, ~1.2e-5, unless given);
// the scale is the smallest normal double, so that zero equals zero (doctest compares with <).
// A value near zero against zero needs an absolute bound: .scale(...) or a plain inequality.
#include <doctest/doctest.h>

#include <limits>

namespace exasim::testing {

inline doctest::Approx approx(double value) { return doctest::Approx(value).scale(std::numeric_limits<double>::min()); }

}  // namespace exasim::testing
