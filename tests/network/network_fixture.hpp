#pragma once
// Clusters and ops for the network tests, written the way scenarios write them.
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "sim/net/analytical_network.hpp"
#include "sim/net/flow_network.hpp"
#include "sim/net/group_placement.hpp"
#include "workloads/scenario/scenario.hpp"

namespace exasim::testing {

inline const hw::Catalog& net_catalog() {
  static const hw::Catalog c = hw::Catalog::load(hw::default_configs_dir());
  return c;
}

inline topologies::Cluster cluster_of(const std::string& yaml) {
  return workloads::read_cluster(config::load_string(yaml, "test.yaml"), net_catalog());
}

inline sim::CommOp op_on(const topologies::Cluster& c, sim::CommKind kind, double bytes, const std::string& layout,
                         int ranks) {
  return sim::CommOp(kind, bytes, sim::place_group(layout, ranks, c));
}

// Parameters whose only cheap protocol is Simple (LL and LL128 steps cost a second), so that a
// hand calculation needs no protocol choice.
inline models::CollectiveParams simple_only() {
  models::CollectiveParams p;
  p.ll_step_overhead_s = p.ll_inter_step_overhead_s = 1;
  p.ll128_step_overhead_s = p.ll128_inter_step_overhead_s = 1;
  return p;
}

inline sim::NetworkOptions forcing(models::Collective op, models::CollectiveAlgorithm a) {
  sim::NetworkOptions o;
  o.algorithms.set(op, a);
  return o;
}

// Network switches (all tiers) of the topology the cluster builds.
inline int switch_count(const topologies::Cluster& c) {
  const topologies::Topology t = topologies::build_topology(c);
  int n = 0;
  for (std::size_t v = 0; v < t.vertex_count(); ++v) n += t.vertex(v).kind == topologies::VertexKind::kSwitch ? 1 : 0;
  return n;
}

}  // namespace exasim::testing
