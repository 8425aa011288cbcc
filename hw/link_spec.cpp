#include "hw/link_spec.hpp"

#include <array>

#include "hw/config/fields.hpp"

namespace exasim::hw {
namespace {
using config::Node;
using units::Dimension;
const std::array<config::Field<LinkSpec>, 3> kFields = {{
    {"kind", [](LinkSpec& s, const Node& n) { s.kind = n.as_choice({"nvlink", "pcie", "xgmi"}); }},
    {"bandwidth", [](LinkSpec& s, const Node& n) { s.bandwidth = n.as_positive_quantity(Dimension::kBandwidth); }},
    {"latency", [](LinkSpec& s, const Node& n) { s.latency = n.as_nonnegative_quantity(Dimension::kTime); }},
}};
}  // namespace

LinkSpec link_from_layers(const std::string& name, const std::vector<config::Node>& layers) {
  LinkSpec s = config::build_from_layers<LinkSpec>(kFields, layers);
  s.name = name;
  return s;
}

}  // namespace exasim::hw
