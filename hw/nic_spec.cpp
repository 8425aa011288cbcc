#include "hw/nic_spec.hpp"

#include <array>

#include "hw/config/fields.hpp"

namespace exasim::hw {
namespace {
using config::Node;
using units::Dimension;
const std::array<config::Field<NicSpec>, 4> kFields = {{
    {"kind", [](NicSpec& s, const Node& n) { s.kind = n.as_choice({"infiniband", "roce", "slingshot", "ethernet"}); }},
    {"bandwidth", [](NicSpec& s, const Node& n) { s.bandwidth = n.as_positive_quantity(Dimension::kBandwidth); }},
    {"latency", [](NicSpec& s, const Node& n) { s.latency = n.as_nonnegative_quantity(Dimension::kTime); }},
    {"switch_latency", [](NicSpec& s, const Node& n) { s.switch_latency = n.as_nonnegative_quantity(Dimension::kTime); }, false},
}};
}  // namespace

NicSpec nic_from_layers(const std::string& name, const std::vector<config::Node>& layers) {
  NicSpec s = config::build_from_layers<NicSpec>(kFields, layers);
  s.name = name;
  return s;
}

}  // namespace exasim::hw
