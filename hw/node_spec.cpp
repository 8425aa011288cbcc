#include "hw/node_spec.hpp"

#include <array>

#include "hw/config/fields.hpp"

namespace exasim::hw {
namespace {
using config::Node;
using units::Dimension;
int count(const Node& n) { return n.as_positive_count(); }
const std::array<config::Field<NodeSpec>, 12> kFields = {{
    {"gpu", [](NodeSpec& s, const Node& n) { s.gpu = n.as_string(); }},
    {"gpus_per_node", [](NodeSpec& s, const Node& n) { s.gpus_per_node = count(n); }},
    {"fabric", [](NodeSpec& s, const Node& n) { s.fabric = n.as_string(); }},
    {"nic", [](NodeSpec& s, const Node& n) { s.nic = n.as_string(); }},
    {"nics_per_node", [](NodeSpec& s, const Node& n) { s.nics_per_node = count(n); }},
    {"cpu", [](NodeSpec& s, const Node& n) { s.cpu = n.as_string(); }, false},
    {"cpus_per_node", [](NodeSpec& s, const Node& n) { s.cpus_per_node = count(n); }, false},
    {"host_memory", [](NodeSpec& s, const Node& n) { s.host_memory_bytes = n.as_positive_quantity(Dimension::kBytes); }, false},
    {"pcie", [](NodeSpec& s, const Node& n) { s.pcie = n.as_string(); }, false},
    {"nvme_read", [](NodeSpec& s, const Node& n) { s.nvme_read_bandwidth = n.as_positive_quantity(Dimension::kBandwidth); }, false},
    {"nvme_write", [](NodeSpec& s, const Node& n) { s.nvme_write_bandwidth = n.as_positive_quantity(Dimension::kBandwidth); }, false},
    {"power_other", [](NodeSpec& s, const Node& n) { s.power_other_w = n.as_nonnegative_quantity(Dimension::kPower); }, false},
}};
}  // namespace

NodeSpec node_from_layers(const std::string& name, const std::vector<config::Node>& layers) {
  NodeSpec s = config::build_from_layers<NodeSpec>(kFields, layers);
  s.name = name;
  return s;
}

}  // namespace exasim::hw
