#pragma once
// Linear least squares with non-negative unknowns: min |A x - b| subject to x >= 0 (Lawson and
// Hanson, "Solving Least Squares Problems", 1974, ch. 23). Costs per byte, times and inverse
// efficiencies are never negative, so the CPU calibration fits them this way: a term that the
// data cannot see drops to zero instead of going negative to cancel noise elsewhere.
#include <Eigen/Dense>

namespace exasim::models {

// Columns are scaled to unit norm internally, so features of very different magnitudes
// (seconds per byte next to seconds per call) are handled alike.
Eigen::VectorXd nonnegative_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b);

// The same with lower bounds x >= lower, made robust to outliers among the first `data_rows` rows
// (measurements a busy machine disturbed): iteratively reweighted least squares with Cauchy
// weights 1 / (1 + (r / scale)^2) (Holland and Welsch, Commun. Stat. 6(9), 1977). Later rows
// (priors) keep weight 1. `cost` is the robust objective: sum of log(1 + (r / scale)^2) over the
// data rows plus the squared prior residuals, divided by scale^2 so that it reads like squares.
struct RobustFit {
  Eigen::VectorXd x;
  double cost = 0;
};
RobustFit robust_bounded_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, const Eigen::VectorXd& lower,
                                       Eigen::Index data_rows, double scale);

}  // namespace exasim::models
