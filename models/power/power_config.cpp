#include "models/power/power_config.hpp"

namespace exasim::models {

namespace {

using units::Dimension;

DvfsCurve read_dvfs(const config::Node& n) {
  n.check_keys({"min_frequency", "knee", "voltage_floor"});
  DvfsCurve c;
  if (n.has("min_frequency")) c.min_frequency = n["min_frequency"].as_fraction();
  if (n.has("knee")) c.knee = n["knee"].as_fraction();
  if (n.has("voltage_floor")) c.voltage_floor = n["voltage_floor"].as_fraction();
  if (c.min_frequency <= 0 || c.knee >= 1 || c.voltage_floor <= 0)
    n.fail("the DVFS curve needs 0 < min_frequency, knee < 1 and voltage_floor > 0", "for example {min_frequency: 0.15, knee: 0.5, voltage_floor: 0.7}");
  return c;
}

}  // namespace

PowerConfig read_power_config(const config::Node& n) {
  PowerConfig c;
  if (!n.defined()) return c;
  n.expect_map();
  n.check_keys({"gpu_cap", "facility_budget", "whatif_caps", "dvfs"});
  if (n.has("gpu_cap")) c.gpu_cap_w = n["gpu_cap"].as_positive_quantity(Dimension::kPower);
  if (n.has("facility_budget")) c.facility_budget_w = n["facility_budget"].as_positive_quantity(Dimension::kPower);
  if (n.has("whatif_caps")) {
    const config::Node caps = n["whatif_caps"];
    if (!caps.is_sequence() || caps.size() == 0) caps.fail("whatif_caps must be a non-empty list of powers", "for example [700 W, 500 W]");
    for (std::size_t i = 0; i < caps.size(); ++i) c.whatif_caps_w.push_back(caps.at(i).as_positive_quantity(Dimension::kPower));
  }
  if (n.has("dvfs")) c.dvfs = read_dvfs(n["dvfs"]);
  return c;
}

std::vector<double> whatif_caps(const PowerConfig& c, double tdp_w) {
  if (!c.whatif_caps_w.empty()) return c.whatif_caps_w;
  std::vector<double> caps;
  for (int pct = 100; pct >= 50; pct -= 10) caps.push_back(tdp_w * pct / 100.0);
  return caps;
}

}  // namespace exasim::models
