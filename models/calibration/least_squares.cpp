#include "models/calibration/least_squares.hpp"

#include <algorithm>

#include "hw/error.hpp"

namespace exasim::models {

namespace {

Eigen::VectorXd clamp(Eigen::VectorXd x, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) {
  return x.cwiseMax(lo).cwiseMin(hi);
}

}  // namespace

LeastSquaresReport levenberg_marquardt(Eigen::VectorXd& x, const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                                       const ResidualFunction& residuals, const LeastSquaresOptions& options) {
  LeastSquaresReport rep;
  x = clamp(x, lower, upper);
  Eigen::VectorXd r;
  residuals(x, r);
  double cost = r.squaredNorm();
  rep.initial_cost = cost;
  const Eigen::Index n = x.size();
  Eigen::MatrixXd J(r.size(), n);
  Eigen::VectorXd rp(r.size());
  double lambda = 1e-3;
  for (rep.iterations = 0; rep.iterations < options.max_iterations; ++rep.iterations) {
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::VectorXd xp = x;
      // Step inward when x sits on its upper bound, so the difference stays inside the box.
      const double h = x[j] + options.step <= upper[j] ? options.step : -options.step;
      xp[j] += h;
      residuals(xp, rp);
      J.col(j) = (rp - r) / h;
    }
    const Eigen::MatrixXd A = J.transpose() * J;
    const Eigen::VectorXd g = J.transpose() * r;
    bool improved = false;
    for (int tries = 0; tries < 12 && !improved; ++tries) {
      Eigen::MatrixXd damped = A;
      damped.diagonal() += lambda * (A.diagonal().array() + 1e-12).matrix();
      const Eigen::VectorXd dx = damped.ldlt().solve(-g);
      const Eigen::VectorXd xn = clamp(x + dx, lower, upper);
      residuals(xn, rp);
      const double c = rp.squaredNorm();
      if (c < cost) {
        const double gain = (cost - c) / std::max(cost, 1e-300);
        x = xn, r = rp, cost = c, improved = true;
        lambda = std::max(lambda / 3, 1e-9);
        if (gain < options.relative_tolerance) {
          rep.converged = true;
          rep.final_cost = cost;
          return rep;
        }
      } else {
        lambda *= 4;
      }
    }
    if (!improved) {
      rep.converged = true;  // no step in any damping improves: a (local) minimum
      break;
    }
  }
  rep.final_cost = cost;
  return rep;
}

void require_samples_for_fit(const std::string& what, std::size_t samples, std::size_t parameters,
                             std::size_t per_parameter) {
  const std::size_t needed = std::max<std::size_t>(1, per_parameter * parameters);
  if (samples >= needed) return;
  throw ConfigError("too few " + what + " to fit " + std::to_string(parameters) + " parameters: " + std::to_string(samples) +
                        " in the fit set, at least " + std::to_string(needed) + " needed",
                    {}, "measure more shapes, or hold fewer out (--held-out-shapes)");
}

}  // namespace exasim::models
