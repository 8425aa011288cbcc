#include "hw/gpu_spec.hpp"

#include <array>

#include "hw/config/fields.hpp"

namespace exasim::hw {

namespace {

using config::Node;
using units::Dimension;

void apply_peaks(GpuSpec& g, const Node& n) {
  n.expect_map();
  for (const std::string& key : n.keys()) {
    auto t = dtype_from_name(key);
    if (!t) {
      n[key].fail("unknown data type \"" + key + "\"", "use fp64, fp32, tf32, fp16, bf16, fp8, fp4 or int8");
    }
    g.peak_flops[static_cast<std::size_t>(*t)] = n[key].as_positive_quantity(Dimension::kFlopRate);
  }
}

void apply_vector(GpuSpec& g, const Node& n) {
  n.expect_map();
  for (const std::string& key : n.keys()) {
    auto t = dtype_from_name(key);
    if (!t) n[key].fail("unknown data type \"" + key + "\"", "use fp64, fp32, fp16 or bf16");
    g.vector_flops[static_cast<std::size_t>(*t)] = n[key].as_positive_quantity(Dimension::kFlopRate);
  }
}

void apply_measured_matmul(GpuSpec& g, const Node& n) {
  n.expect_map();
  for (const std::string& key : n.keys()) {
    auto t = dtype_from_name(key);
    if (!t) n[key].fail("unknown data type \"" + key + "\"", "use fp64, fp32, tf32, fp16, bf16, fp8, fp4 or int8");
    g.measured_matmul_flops[static_cast<std::size_t>(*t)] = n[key].as_positive_quantity(Dimension::kFlopRate);
  }
}

int positive_int(const Node& n) { return n.as_positive_count(); }

const std::array<config::Field<GpuSpec>, 26> kFields = {{
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
  for (DType t : kAllDTypes)
    if (g.measured_matmul(t) > g.peak(t)) {
      for (auto it = layers.rbegin(); it != layers.rend(); ++it)
        if (it->has("measured_matmul") && (*it)["measured_matmul"].has(std::string(dtype_name(t))))
          (*it)["measured_matmul"][std::string(dtype_name(t))].fail(
              "measured matmul rate exceeds the dense peak of " + std::string(dtype_name(t)),
              "give the rate a GEMM benchmark measured, below peak." + std::string(dtype_name(t)));
      layers.back().fail("measured_matmul." + std::string(dtype_name(t)) + " exceeds peak." + std::string(dtype_name(t)));
    }
  if (g.vector_flops[static_cast<std::size_t>(DType::kFp32)] == 0)
    g.vector_flops[static_cast<std::size_t>(DType::kFp32)] = g.vector_fp32_flops;
  return g;
}

}  // namespace exasim::hw
