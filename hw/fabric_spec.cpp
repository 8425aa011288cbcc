#include "hw/fabric_spec.hpp"

#include <array>

#include "hw/config/fields.hpp"

namespace exasim::hw {
namespace {
using config::Node;
using units::Dimension;
const std::array<config::Field<FabricSpec>, 6> kFields = {{
    {"kind", [](FabricSpec& s, const Node& n) { s.kind = n.as_choice({"nvswitch", "pcie", "xgmi"}); }},
    {"link", [](FabricSpec& s, const Node& n) { s.link = n.as_string(); }, false},
    {"bandwidth", [](FabricSpec& s, const Node& n) { s.bandwidth = n.as_positive_quantity(Dimension::kBandwidth); }},
    {"latency", [](FabricSpec& s, const Node& n) { s.latency = n.as_nonnegative_quantity(Dimension::kTime); }},
    {"max_gpus", [](FabricSpec& s, const Node& n) { s.max_gpus = n.as_positive_count(); }, false},
    {"in_switch_reduction", [](FabricSpec& s, const Node& n) { s.in_switch_reduction = n.as_bool(); }, false},
}};
}  // namespace

FabricSpec fabric_from_layers(const std::string& name, const std::vector<config::Node>& layers) {
  FabricSpec s = config::build_from_layers<FabricSpec>(kFields, layers);
  s.name = name;
  return s;
}

}  // namespace exasim::hw
