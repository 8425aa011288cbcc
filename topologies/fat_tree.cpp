// Fat-trees (folded Clos) of switches with `radix` ports. Leaves give radix*o/(1+o) ports to
// NICs and the rest to uplinks (o = oversubscription). Two tiers when every leaf can reach every
// spine; three otherwise: pods of radix/2 leaves under aggregation switches, which reach cores.
// A plain fat-tree puts a node's NICs on the same leaf; a rail-optimized one puts NIC i of every
// node on the leaves of rail i, so same-rail traffic never leaves its rail switch.
#include <algorithm>
#include <cmath>
#include <string>

#include "hw/error.hpp"
#include "topologies/network_builders.hpp"

namespace exasim::topologies {

namespace {

// Default radix: NVIDIA Quantum-2 QM9700, 64 NDR ports (datasheet).
constexpr int kDefaultRadix = 64;

struct LeafPorts {
  int down = 0;
  int up = 0;
};

LeafPorts leaf_ports(const InterNode& spec) {
  const int radix = switch_radix(spec);
  const double o = spec.oversubscription;
  LeafPorts p;
  p.down = std::max(1, static_cast<int>(std::floor(radix * o / (1 + o) + 1e-9)));
  p.up = std::max(1, radix - p.down);
  return p;
}

// Connects each leaf's `up` uplinks round-robin over `spines`, aggregating parallel links.
void connect_round_robin(Topology& t, const std::vector<Vertex>& lower, int up, const std::vector<Vertex>& upper,
                         double port_bw, double latency) {
  const int s = static_cast<int>(upper.size());
  for (std::size_t i = 0; i < lower.size(); ++i) {
    for (int k = 0; k < s; ++k) {
      const int count = up / s + (k < up % s ? 1 : 0);
      if (count > 0) connect_switches(t, lower[i], upper[k], count, port_bw, latency);
    }
  }
}

std::vector<Vertex> three_tiers(Topology& t, const std::vector<Vertex>& leaves, int up, int radix, double port_bw,
                                double latency, const std::string& prefix) {
  const int half = std::max(1, radix / 2);
  const int pods = static_cast<int>((leaves.size() + half - 1) / half);
  if (pods > radix) {
    throw ConfigError("a 3-tier fat-tree of radix " + std::to_string(radix) + " holds at most " +
                          std::to_string(radix * half) + " leaves, " + std::to_string(leaves.size()) + " needed",
                      {}, "raise cluster.inter_node.switch_radix");
  }
  // Cores in `up` groups; group a serves aggregation switch a of every pod, each aggregation
  // switch spreads its radix/2 uplinks over its group.
  const int group = std::max(1, (half * pods + radix - 1) / radix);
  std::vector<Vertex> cores;
  for (int c = 0; c < up * group; ++c) cores.push_back(add_switch(t, prefix + "core" + std::to_string(c), 3));
  for (int p = 0; p < pods; ++p) {
    for (int a = 0; a < up; ++a) {
      const Vertex agg = add_switch(t, prefix + "pod" + std::to_string(p) + "/agg" + std::to_string(a), 2);
      for (int l = p * half; l < std::min<int>((p + 1) * half, static_cast<int>(leaves.size())); ++l)
        connect_switches(t, leaves[l], agg, 1, port_bw, latency);
      const std::vector<Vertex> mine(cores.begin() + a * group, cores.begin() + (a + 1) * group);
      connect_round_robin(t, {agg}, half, mine, port_bw, latency);
    }
  }
  return cores;
}

}  // namespace

double port_bandwidth(const std::vector<NodeNics>& nodes) {
  double bw = 0;
  for (const NodeNics& n : nodes) bw = std::max(bw, n.nic.bandwidth);
  return bw;
}

double switch_latency(const std::vector<NodeNics>& nodes) {
  double lat = 0;
  for (const NodeNics& n : nodes) lat = std::max(lat, n.nic.switch_latency);
  return lat;
}

int switch_radix(const InterNode& spec) { return spec.switch_radix > 0 ? spec.switch_radix : kDefaultRadix; }

Vertex add_switch(Topology& t, const std::string& name, int tier) {
  return t.add_vertex({VertexKind::kSwitch, -1, tier, name});
}

void connect_port(Topology& t, Vertex nic, Vertex sw, const hw::NicSpec& spec) {
  // The NIC's one-switch latency splits over its two switch ports.
  t.add_link(nic, sw, {LinkKind::kNetwork, spec.bandwidth, spec.latency / 2});
}

void connect_switches(Topology& t, Vertex a, Vertex b, int count, double port_bw, double latency) {
  t.add_link(a, b, {LinkKind::kNetwork, count * port_bw, latency, count});
}

std::vector<Vertex> build_upper_tiers(Topology& t, const std::vector<Vertex>& leaves, int up, int radix, int tiers,
                                      double port_bw, double latency, const std::string& prefix) {
  if (leaves.size() <= 1) return leaves;
  const bool two = tiers == 2 || (tiers == 0 && static_cast<int>(leaves.size()) <= radix);
  if (!two) return three_tiers(t, leaves, up, radix, port_bw, latency, prefix);
  if (static_cast<int>(leaves.size()) > radix) {
    throw ConfigError(std::to_string(leaves.size()) + " leaf switches do not fit a 2-tier fat-tree of radix " +
                          std::to_string(radix),
                      {}, "use tiers: 3 or a larger switch_radix");
  }
  const int total = static_cast<int>(leaves.size()) * up;
  const int count = std::clamp((total + radix - 1) / radix, 1, up);
  std::vector<Vertex> spines;
  for (int s = 0; s < count; ++s) spines.push_back(add_switch(t, prefix + "spine" + std::to_string(s), 2));
  connect_round_robin(t, leaves, up, spines, port_bw, latency);
  return spines;
}

std::vector<Vertex> build_fat_tree(Topology& t, const InterNode& spec, const std::vector<NodeNics>& nodes,
                                   const std::string& prefix) {
  const LeafPorts lp = leaf_ports(spec);
  std::vector<Vertex> leaves;
  int used = lp.down;
  for (const NodeNics& n : nodes) {
    for (Vertex port : n.ports) {
      if (used == lp.down) {
        leaves.push_back(add_switch(t, prefix + "leaf" + std::to_string(leaves.size()), 1));
        used = 0;
      }
      connect_port(t, port, leaves.back(), n.nic);
      ++used;
    }
  }
  return build_upper_tiers(t, leaves, lp.up, switch_radix(spec), spec.tiers, port_bandwidth(nodes),
                           switch_latency(nodes), prefix);
}

std::vector<Vertex> build_rail_optimized(Topology& t, const InterNode& spec, const std::vector<NodeNics>& nodes,
                                         const std::string& prefix) {
  const LeafPorts lp = leaf_ports(spec);
  std::size_t rails = 0;
  for (const NodeNics& n : nodes) rails = std::max(rails, n.ports.size());
  std::vector<Vertex> leaves;
  for (std::size_t r = 0; r < rails; ++r) {
    int used = lp.down;
    for (const NodeNics& n : nodes) {
      if (r >= n.ports.size()) continue;
      if (used == lp.down) {
        leaves.push_back(add_switch(t, prefix + "rail" + std::to_string(r) + "/leaf" + std::to_string(leaves.size()), 1));
        used = 0;
      }
      connect_port(t, n.ports[r], leaves.back(), n.nic);
      ++used;
    }
  }
  return build_upper_tiers(t, leaves, lp.up, switch_radix(spec), spec.tiers, port_bandwidth(nodes),
                           switch_latency(nodes), prefix);
}

}  // namespace exasim::topologies
