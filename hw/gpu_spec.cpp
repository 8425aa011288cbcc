#include "hw/gpu_spec.hpp"

#include <algorithm>
#include <array>

#include "hw/config/fields.hpp"

namespace exasim::hw {

namespace {

using config::Node;
using units::Dimension;

// A map of data type -> FLOP rate (peak, vector, measured_matmul).
void apply_rates(std::array<double, kAllDTypes.size()>& rates, const Node& n, const char* types) {
  n.expect_map();
  for (const std::string& key : n.keys()) {
    auto t = dtype_from_name(key);
    if (!t) n[key].fail("unknown data type \"" + key + "\"", std::string("use ") + types);
    rates[static_cast<std::size_t>(*t)] = n[key].as_positive_quantity(Dimension::kFlopRate);
  }
}

constexpr const char* kMatrixTypes = "fp64, fp32, tf32, fp16, bf16, fp8, fp4 or int8";
void apply_peaks(GpuSpec& g, const Node& n) { apply_rates(g.peak_flops, n, kMatrixTypes); }
void apply_vector(GpuSpec& g, const Node& n) { apply_rates(g.vector_flops, n, "fp64, fp32, fp16 or bf16"); }
void apply_measured_matmul(GpuSpec& g, const Node& n) { apply_rates(g.measured_matmul_flops, n, kMatrixTypes); }

int positive_int(const Node& n) { return n.as_positive_count(); }

const std::array<config::Field<GpuSpec>, 27> kFields = {{
    {"vendor", [](GpuSpec& g, const Node& n) { g.vendor = n.as_choice({"nvidia", "amd"}); }},
    {"architecture", [](GpuSpec& g, const Node& n) { g.architecture = n.as_string(); }},
    {"sm_count", [](GpuSpec& g, const Node& n) { g.sm_count = n.as_positive_count(); }},
    {"boost_clock", [](GpuSpec& g, const Node& n) { g.boost_clock_hz = n.as_positive_quantity(Dimension::kFrequency); }},
    {"peak", apply_peaks},
    {"vector_fp32", [](GpuSpec& g, const Node& n) { g.vector_fp32_flops = n.as_positive_quantity(Dimension::kFlopRate); }},
    {"hbm_capacity", [](GpuSpec& g, const Node& n) { g.hbm_capacity_bytes = n.as_positive_quantity(Dimension::kBytes); }},
    {"hbm_bandwidth", [](GpuSpec& g, const Node& n) { g.hbm_bandwidth = n.as_positive_quantity(Dimension::kBandwidth); }},
    {"l2_size", [](GpuSpec& g, const Node& n) { g.l2_bytes = n.as_positive_quantity(Dimension::kBytes); }},
    {"smem_per_sm", [](GpuSpec& g, const Node& n) { g.smem_per_sm_bytes = n.as_positive_quantity(Dimension::kBytes); }},
    {"tdp", [](GpuSpec& g, const Node& n) { g.tdp_w = n.as_positive_quantity(Dimension::kPower); }},
    {"idle_power", [](GpuSpec& g, const Node& n) { g.idle_power_w = n.as_nonnegative_quantity(Dimension::kPower); }},
    {"nvlink_bandwidth", [](GpuSpec& g, const Node& n) { g.scaleup_bandwidth = n.as_nonnegative_quantity(Dimension::kBandwidth); }},
    {"pcie", [](GpuSpec& g, const Node& n) { g.pcie = n.as_string(); }},
    {"node_fabric", [](GpuSpec& g, const Node& n) { g.node_fabric = n.as_string(); }},
    {"base_clock", [](GpuSpec& g, const Node& n) { g.base_clock_hz = n.as_positive_quantity(Dimension::kFrequency); }, false},
    {"vector", apply_vector, false},
    {"registers_per_sm", [](GpuSpec& g, const Node& n) { g.registers_per_sm = static_cast<double>(n.as_positive_int()); }, false},
    {"max_ctas_per_sm", [](GpuSpec& g, const Node& n) { g.max_ctas_per_sm = positive_int(n); }, false},
    {"max_warps_per_sm", [](GpuSpec& g, const Node& n) { g.max_warps_per_sm = positive_int(n); }, false},
    {"smem_bandwidth_per_sm", [](GpuSpec& g, const Node& n) { g.smem_bandwidth_per_sm = n.as_positive_quantity(Dimension::kBandwidth); }, false},
    {"l2_bandwidth", [](GpuSpec& g, const Node& n) { g.l2_bandwidth = n.as_positive_quantity(Dimension::kBandwidth); }, false},
    {"hbm_latency", [](GpuSpec& g, const Node& n) { g.hbm_latency_s = n.as_positive_quantity(Dimension::kTime); }, false},
    {"special_functions_per_clock", [](GpuSpec& g, const Node& n) { g.special_functions_per_clock = static_cast<double>(n.as_positive_int()); }, false},
    {"measured_matmul", apply_measured_matmul, false},
    {"name", [](GpuSpec& g, const Node& n) { g.name = n.as_string(); }, false},
    {"description", [](GpuSpec&, const Node& n) { (void)n.as_string(); }, false},
}};

}  // namespace

GpuSpec gpu_from_layers(const std::string& name, const std::vector<config::Node>& layers) {
  GpuSpec g = config::build_from_layers<GpuSpec>(kFields, layers);
  if (g.name.empty()) g.name = name;
  if (g.idle_power_w >= g.tdp_w) layers.back()["idle_power"].fail("idle power must be below TDP");
  if (!g.supports(DType::kFp32)) layers.back()["peak"].fail("peak.fp32 is required", "every GPU runs fp32");
  // A measured rate above the peak is a typo or a sparse figure: named where it was given (the
  // last layer that sets it; the peak may come from another).
  for (DType t : kAllDTypes) {
    if (g.measured_matmul(t) <= g.peak(t)) continue;
    const std::string type(dtype_name(t));
    auto given = std::find_if(layers.rbegin(), layers.rend(),
                              [&](const Node& l) { return l.has("measured_matmul") && l["measured_matmul"].has(type); });
    const Node& where = given != layers.rend() ? (*given)["measured_matmul"][type] : layers.back();
    where.fail("measured matmul rate exceeds the dense peak of " + type,
               "give the rate a GEMM benchmark measured (dense), below peak." + type);
  }
  if (g.vector_flops[static_cast<std::size_t>(DType::kFp32)] == 0)
    g.vector_flops[static_cast<std::size_t>(DType::kFp32)] = g.vector_fp32_flops;
  return g;
}

}  // namespace exasim::hw
