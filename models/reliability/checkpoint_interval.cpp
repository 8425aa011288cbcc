#include "models/reliability/checkpoint_interval.hpp"

#include <cmath>

namespace exasim::models {

double expected_goodput(const CheckpointedJob& job, double interval_s) {
  const double m = job.mtbf_s;
  // expm1 keeps the short-segment case (interval + checkpoint << M) exact to the last digit.
  const double wall_per_segment = m * std::exp(job.restart_s / m) * std::expm1((interval_s + job.checkpoint_s) / m);
  return interval_s / wall_per_segment;
}

double young_interval(const CheckpointedJob& job) { return std::sqrt(2 * job.checkpoint_s * job.mtbf_s); }

double daly_interval(const CheckpointedJob& job) {
  const double d = job.checkpoint_s, m = job.mtbf_s;
  if (d >= 2 * m) return m;
  const double x = d / (2 * m);
  return std::sqrt(2 * d * m) * (1 + std::sqrt(x) / 3 + x / 9) - d;
}

double optimal_interval(const CheckpointedJob& job) {
  // The optimum lies within [1e-6 M, 10 M] for any checkpoint cost: below, the checkpoints take
  // almost all the time; above, almost every segment is lost.
  double lo = std::log(job.mtbf_s * 1e-6), hi = std::log(job.mtbf_s * 10);
  const double inv_phi = (std::sqrt(5.0) - 1) / 2;
  const auto value = [&](double log_interval) { return expected_goodput(job, std::exp(log_interval)); };
  double a = hi - inv_phi * (hi - lo), b = lo + inv_phi * (hi - lo);
  double fa = value(a), fb = value(b);
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    if (fa > fb) {
      hi = b;
      b = a;
      fb = fa;
      a = hi - inv_phi * (hi - lo);
      fa = value(a);
    } else {
      lo = a;
      a = b;
      fa = fb;
      b = lo + inv_phi * (hi - lo);
      fb = value(b);
    }
  }
  return std::exp((lo + hi) / 2);
}

}  // namespace exasim::models
