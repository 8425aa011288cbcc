#include "hw/storage_spec.hpp"

#include <array>

#include "hw/config/fields.hpp"

namespace exasim::hw {
namespace {
using config::Node;
using units::Dimension;
const std::array<config::Field<StorageSpec>, 4> kFields = {{
    {"kind", [](StorageSpec& s, const Node& n) { s.kind = n.as_choice({"parallel-fs", "object", "distributed-fs"}); }},
    {"write_bandwidth", [](StorageSpec& s, const Node& n) { s.write_bandwidth = n.as_positive_quantity(Dimension::kBandwidth); }},
    {"read_bandwidth", [](StorageSpec& s, const Node& n) { s.read_bandwidth = n.as_positive_quantity(Dimension::kBandwidth); }},
    {"node_bandwidth", [](StorageSpec& s, const Node& n) { s.node_bandwidth = n.as_positive_quantity(Dimension::kBandwidth); }},
}};
}  // namespace

StorageSpec storage_from_layers(const std::string& name, const std::vector<config::Node>& layers) {
  StorageSpec s = config::build_from_layers<StorageSpec>(kFields, layers);
  s.name = name;
  return s;
}

}  // namespace exasim::hw
