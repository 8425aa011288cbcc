#include "models/collective/collective_params.hpp"

namespace exasim::models {

namespace {

using config::Node;
using units::Dimension;

}  // namespace

std::string_view protocol_name(Protocol p) {
  switch (p) {
    case Protocol::kSimple: return "Simple";
    case Protocol::kLL128: return "LL128";
    case Protocol::kLL: return "LL";
  }
  return "?";
}

double protocol_bandwidth_fraction(Protocol p) {
  switch (p) {
    case Protocol::kSimple: return 1;
    case Protocol::kLL128: return 120.0 / 128.0;
    case Protocol::kLL: return 0.5;
  }
  return 1;
}

void apply_collective_params(CollectiveParams& p, const Node& n) {
  n.check_keys({"intra_efficiency", "xgmi_efficiency", "pcie_efficiency", "inter_efficiency", "reduction_efficiency", "nvls_efficiency", "step_overhead", "inter_step_overhead",
                "ll_step_overhead", "ll_inter_step_overhead", "ll128_step_overhead", "ll128_inter_step_overhead",
                "launch_overhead", "p2p_launch_overhead", "collective_sms", "p2p_sms",
                "userbuffers_reduce_scatter_sms", "userbuffers_all_gather_sms"});
  if (n.has("intra_efficiency")) p.intra_efficiency = n["intra_efficiency"].as_efficiency();
  if (n.has("xgmi_efficiency")) p.xgmi_efficiency = n["xgmi_efficiency"].as_efficiency();
  if (n.has("pcie_efficiency")) p.pcie_efficiency = n["pcie_efficiency"].as_efficiency();
  if (n.has("reduction_efficiency")) p.reduction_efficiency = n["reduction_efficiency"].as_efficiency();
  if (n.has("inter_efficiency")) p.inter_efficiency = n["inter_efficiency"].as_efficiency();
  if (n.has("nvls_efficiency")) p.nvls_efficiency = n["nvls_efficiency"].as_efficiency();
  if (n.has("step_overhead")) p.step_overhead_s = n["step_overhead"].as_nonnegative_quantity(Dimension::kTime);
  if (n.has("inter_step_overhead"))
    p.inter_step_overhead_s = n["inter_step_overhead"].as_nonnegative_quantity(Dimension::kTime);
  if (n.has("ll_step_overhead")) p.ll_step_overhead_s = n["ll_step_overhead"].as_nonnegative_quantity(Dimension::kTime);
  if (n.has("ll_inter_step_overhead"))
    p.ll_inter_step_overhead_s = n["ll_inter_step_overhead"].as_nonnegative_quantity(Dimension::kTime);
  if (n.has("ll128_step_overhead"))
    p.ll128_step_overhead_s = n["ll128_step_overhead"].as_nonnegative_quantity(Dimension::kTime);
  if (n.has("ll128_inter_step_overhead"))
    p.ll128_inter_step_overhead_s = n["ll128_inter_step_overhead"].as_nonnegative_quantity(Dimension::kTime);
  if (n.has("launch_overhead")) p.launch_overhead_s = n["launch_overhead"].as_nonnegative_quantity(Dimension::kTime);
  if (n.has("p2p_launch_overhead"))
    p.p2p_launch_overhead_s = n["p2p_launch_overhead"].as_nonnegative_quantity(Dimension::kTime);
  for (auto [key, field] : {std::pair{"collective_sms", &p.collective_sms}, std::pair{"p2p_sms", &p.p2p_sms},
                            std::pair{"userbuffers_reduce_scatter_sms", &p.userbuffers_reduce_scatter_sms},
                            std::pair{"userbuffers_all_gather_sms", &p.userbuffers_all_gather_sms}}) {
    if (!n.has(key)) continue;
    const double v = n[key].as_number();
    if (!(v >= 0)) n[key].fail("an SM count must be >= 0", "the GPU's SMs a communication holds while it runs, e.g. 16");
    *field = v;
  }
}

}  // namespace exasim::models
