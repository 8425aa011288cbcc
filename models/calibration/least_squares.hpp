#pragma once
// Bounded nonlinear least squares (Levenberg-Marquardt, Eigen) for calibrating model
// parameters: minimises sum_i r_i(x)^2 over x within [lower, upper]. The Jacobian is taken by
// forward differences, so any model that maps parameters to predictions can be fitted, including
// the piecewise tile models (the step is large enough to see across tile switches).
#include <Eigen/Dense>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace exasim::models {

struct LeastSquaresOptions {
  int max_iterations = 60;
  double relative_tolerance = 1e-7;  // stop when the cost improves by less than this fraction
  double step = 1e-2;                // forward-difference step, in units of x
};

struct LeastSquaresReport {
  int iterations = 0;
  double initial_cost = 0;  // sum of squared residuals
  double final_cost = 0;
  bool converged = false;
};

// residuals(x, r): fills r (its size is fixed by the first call) for parameters x.
using ResidualFunction = std::function<void(const Eigen::VectorXd& x, Eigen::VectorXd& r)>;

LeastSquaresReport levenberg_marquardt(Eigen::VectorXd& x, const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                                       const ResidualFunction& residuals, const LeastSquaresOptions& options = {});

// A fit identifies its parameters only with more measurements than parameters: with as many,
// any model interpolates them and the residuals say nothing. The fits ask for at least this
// many measurements per fitted parameter.
inline constexpr std::size_t kSamplesPerParameter = 2;

// Throws ConfigError when `samples` < `per_parameter` x `parameters`, or there are none: "too few
// <what> to fit <parameters> parameters: <samples> in the fit set, at least <n> needed".
void require_samples_for_fit(const std::string& what, std::size_t samples, std::size_t parameters,
                             std::size_t per_parameter = kSamplesPerParameter);

}  // namespace exasim::models
