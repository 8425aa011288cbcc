#include "models/cpu/nonnegative_least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace exasim::models {

namespace {

// Least squares over the columns in `passive` only; the others stay zero.
Eigen::VectorXd solve_passive(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, const std::vector<bool>& passive) {
  std::vector<Eigen::Index> cols;
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    if (passive[static_cast<std::size_t>(j)]) cols.push_back(j);
  }
  Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(cols.size()));
  for (std::size_t c = 0; c < cols.size(); ++c) sub.col(static_cast<Eigen::Index>(c)) = a.col(cols[c]);
  const Eigen::VectorXd z = sub.colPivHouseholderQr().solve(b);
  Eigen::VectorXd s = Eigen::VectorXd::Zero(a.cols());
  for (std::size_t c = 0; c < cols.size(); ++c) s[cols[c]] = z[static_cast<Eigen::Index>(c)];
  return s;
}

}  // namespace

Eigen::VectorXd nonnegative_least_squares(const Eigen::MatrixXd& a_in, const Eigen::VectorXd& b) {
  const Eigen::Index n = a_in.cols();
  Eigen::VectorXd scale = a_in.colwise().norm().transpose();
  for (Eigen::Index j = 0; j < n; ++j) scale[j] = scale[j] > 0 ? scale[j] : 1.0;
  const Eigen::MatrixXd a = a_in * scale.cwiseInverse().asDiagonal();
  const double tol = 1e-12 * std::max(1.0, b.norm());
  std::vector<bool> passive(static_cast<std::size_t>(n), false);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  for (int outer = 0; outer < 3 * n + 10; ++outer) {
    const Eigen::VectorXd w = a.transpose() * (b - a * x);
    Eigen::Index best = -1;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!passive[static_cast<std::size_t>(j)] && w[j] > tol && (best < 0 || w[j] > w[best])) best = j;
    }
    if (best < 0) break;  // Kuhn-Tucker conditions hold: optimal
    passive[static_cast<std::size_t>(best)] = true;
    for (int inner = 0; inner < 3 * n + 10; ++inner) {
      const Eigen::VectorXd s = solve_passive(a, b, passive);
      double alpha = 1.0;
      bool feasible = true;
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && s[j] <= 0) {
          feasible = false;
          alpha = std::min(alpha, x[j] / std::max(x[j] - s[j], 1e-300));
        }
      }
      if (feasible) {
        x = s;
        break;
      }
      // Step towards s until the first unknown reaches zero; it leaves the passive set.
      x += alpha * (s - x);
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && x[j] <= 1e-15) {
          passive[static_cast<std::size_t>(j)] = false;
          x[j] = 0;
        }
      }
    }
  }
  return x.cwiseQuotient(scale);
}

RobustFit robust_bounded_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, const Eigen::VectorXd& lower,
                                       Eigen::Index data_rows, double scale) {
  const Eigen::VectorXd shifted = b - a * lower;  // x = lower + y, y >= 0
  Eigen::VectorXd w = Eigen::VectorXd::Ones(a.rows());
  RobustFit fit;
  for (int iteration = 0; iteration < 12; ++iteration) {
    const Eigen::VectorXd y = nonnegative_least_squares(w.asDiagonal() * a, w.asDiagonal() * shifted);
    const Eigen::VectorXd r = a * y - shifted;
    fit.x = lower + y;
    fit.cost = r.tail(a.rows() - data_rows).squaredNorm() / (scale * scale);
    for (Eigen::Index i = 0; i < data_rows; ++i) {
      const double u = r[i] / scale;
      fit.cost += std::log1p(u * u);
      w[i] = 1 / std::sqrt(1 + u * u);  // rows are scaled by sqrt of the Cauchy weight
    }
  }
  return fit;
}

}  // namespace exasim::models
