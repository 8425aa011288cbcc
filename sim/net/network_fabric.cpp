#include "sim/net/network_fabric.hpp"

#include <string>

#include "hw/error.hpp"

namespace exasim::sim {

namespace {

using topologies::LinkKind;

double efficiency(LinkKind k, const models::CollectiveParams& p) {
  switch (k) {
    case LinkKind::kNvlink: return p.intra_efficiency;
    case LinkKind::kXgmi: return p.xgmi_efficiency;
    case LinkKind::kPcie:
    case LinkKind::kHost: return p.pcie_efficiency;
    case LinkKind::kNicAttach:
    case LinkKind::kNetwork:
    case LinkKind::kJoin: return p.inter_efficiency;
  }
  return 1;
}

}  // namespace

NetworkFabric::NetworkFabric(const topologies::Cluster& cluster, const models::CollectiveParams& params)
    : cluster_(cluster), params_(params), topology_(topologies::build_topology(cluster_)), router_(topology_) {
  capacity_.resize(2 * topology_.link_count());
  latency_.resize(2 * topology_.link_count());
  for (std::uint32_t id = 0; id < topology_.link_count(); ++id) {
    const topologies::LinkInfo& l = topology_.link(id);
    for (ChannelId c : {2 * id, 2 * id + 1}) {
      capacity_[c] = l.bandwidth * efficiency(l.kind, params_);
      latency_[c] = l.latency;
    }
  }
}

double NetworkFabric::route_latency(std::span<const ChannelId> r) const {
  double sum = 0;
  for (ChannelId c : r) sum += latency_[c];
  return sum;
}

models::GroupLayout NetworkFabric::layout(const std::vector<std::uint32_t>& ranks) const {
  models::GroupLayout g;
  g.node.reserve(ranks.size());
  g.local.reserve(ranks.size());
  for (std::uint32_t r : ranks) {
    if (r >= static_cast<std::uint32_t>(cluster_.gpu_count())) {
      throw PlanError("rank " + std::to_string(r) + " is outside the cluster of " +
                          std::to_string(cluster_.gpu_count()) + " GPUs",
                      {}, "give ranks 0 .. " + std::to_string(cluster_.gpu_count() - 1));
    }
    g.node.push_back(cluster_.node_of(static_cast<int>(r)));
    g.local.push_back(static_cast<int>(r) % cluster_.gpus_per_node);
  }
  g.switch_reduction = cluster_.intra.in_switch_reduction && topology_.nodes() > 0 && topology_.has_node_switch(0);
  g.mesh = cluster_.intra.kind == "xgmi";
  return g;
}

}  // namespace exasim::sim
