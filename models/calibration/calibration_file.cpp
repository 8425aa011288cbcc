#include "models/calibration/calibration_file.hpp"

namespace exasim::models {

namespace {

using config::Node;
using units::Dimension;

// Efficiencies are fractions of a datasheet figure: above 1 would mean faster than the hardware.
double efficiency(const Node& n) {
  const double v = n.as_number();
  if (!(v > 0 && v <= 1)) n.fail("an efficiency must be in (0, 1], got " + n.as_string());
  return v;
}

void apply_kernel(KernelParams& k, const Node& n) {
  n.check_keys({"matrix_efficiency", "vector_efficiency", "hbm_efficiency", "launch_overhead"});
  if (n.has("matrix_efficiency")) k.matrix_efficiency = efficiency(n["matrix_efficiency"]);
  if (n.has("vector_efficiency")) k.vector_efficiency = efficiency(n["vector_efficiency"]);
  if (n.has("hbm_efficiency")) k.hbm_efficiency = efficiency(n["hbm_efficiency"]);
  if (n.has("launch_overhead")) k.launch_overhead_s = n["launch_overhead"].as_nonnegative_quantity(Dimension::kTime);
}

void apply_collective(CollectiveParams& c, const Node& n) {
  n.check_keys({"intra_efficiency", "inter_efficiency", "step_overhead"});
  if (n.has("intra_efficiency")) c.intra_efficiency = efficiency(n["intra_efficiency"]);
  if (n.has("inter_efficiency")) c.inter_efficiency = efficiency(n["inter_efficiency"]);
  if (n.has("step_overhead")) c.step_overhead_s = n["step_overhead"].as_nonnegative_quantity(Dimension::kTime);
}

}  // namespace

Calibration apply_calibration(Calibration base, const Node& node) {
  node.check_keys({"gpu", "date", "source", "kernel", "collective"});
  if (node.has("kernel")) {
    apply_kernel(base.kernel, node["kernel"]);
    base.kernel.source = "calibration: " + node.file();
  }
  if (node.has("collective")) apply_collective(base.collective, node["collective"]);
  return base;
}

Calibration load_calibration(Calibration base, const std::string& path) {
  return apply_calibration(std::move(base), config::load_file(path));
}

}  // namespace exasim::models
