#include "hw/cpu_spec.hpp"

#include <array>

#include "hw/config/fields.hpp"

namespace exasim::hw {
namespace {
using config::Node;
using units::Dimension;
int count(const Node& n) { return n.as_positive_count(); }
const std::array<config::Field<CpuSpec>, 13> kFields = {{
    {"vendor", [](CpuSpec& s, const Node& n) { s.vendor = n.as_string(); }, false},
    {"cores", [](CpuSpec& s, const Node& n) { s.cores = count(n); }},
    {"base_clock", [](CpuSpec& s, const Node& n) { s.base_clock_hz = n.as_positive_quantity(Dimension::kFrequency); }},
    {"boost_clock", [](CpuSpec& s, const Node& n) { s.boost_clock_hz = n.as_positive_quantity(Dimension::kFrequency); }, false},
    {"simd_width_bits", [](CpuSpec& s, const Node& n) { s.simd_width_bits = count(n); }},
    {"fma_units_per_core", [](CpuSpec& s, const Node& n) { s.fma_units_per_core = count(n); }},
    {"memory_bandwidth", [](CpuSpec& s, const Node& n) { s.memory_bandwidth = n.as_positive_quantity(Dimension::kBandwidth); }},
    {"memory_channels", [](CpuSpec& s, const Node& n) { s.memory_channels = count(n); }, false},
    {"l3_size", [](CpuSpec& s, const Node& n) { s.l3_bytes = n.as_positive_quantity(Dimension::kBytes); }, false},
    {"tdp", [](CpuSpec& s, const Node& n) { s.tdp_w = n.as_positive_quantity(Dimension::kPower); }, false},
    {"idle_power", [](CpuSpec& s, const Node& n) { s.idle_power_w = n.as_positive_quantity(Dimension::kPower); }, false},
    {"memory_capacity", [](CpuSpec& s, const Node& n) { s.memory_capacity = n.as_positive_quantity(Dimension::kBytes); }, false},
    {"description", [](CpuSpec&, const Node& n) { (void)n.as_string(); }, false},
}};
}  // namespace

CpuSpec cpu_from_layers(const std::string& name, const std::vector<config::Node>& layers) {
  CpuSpec s = config::build_from_layers<CpuSpec>(kFields, layers);
  s.name = name;
  return s;
}

}  // namespace exasim::hw
