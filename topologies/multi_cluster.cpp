// Several clusters, each with its own network over its range of nodes, joined through one
// gateway per cluster: every gateway links to every top-tier switch of its cluster at the port
// rate, and gateways link pairwise with the (slower) join link.
#include <algorithm>
#include <string>

#include "hw/error.hpp"
#include "topologies/network_builders.hpp"

namespace exasim::topologies {

std::vector<Vertex> build_multi_cluster(const NetworkContext& ctx) {
  const InterNode& spec = ctx.spec;
  if (spec.parts.size() < 2) {
    throw ConfigError("a multi-cluster system needs at least two clusters", {},
                      "list them under cluster.inter_node.clusters");
  }
  if (!(spec.join_bandwidth > 0)) {
    throw ConfigError("a multi-cluster system needs the join link's bandwidth", {},
                      "set cluster.inter_node.join: {bandwidth: ..., latency: ...}");
  }
  std::vector<Vertex> gateways;
  int first = ctx.first;
  for (std::size_t p = 0; p < spec.parts.size(); ++p) {
    const ClusterPart& part = spec.parts[p];
    const std::string prefix = ctx.prefix + "c" + std::to_string(p) + "/";
    NetworkContext sub{ctx.t, ctx.cluster, part.network.at(0), first, part.nodes, ctx.nic_side, prefix};
    const std::vector<Vertex> tops = build_network(sub);
    const Vertex gw = ctx.t.add_vertex({VertexKind::kGateway, -1, 4, prefix + "gateway"});
    const hw::NicSpec& nic = part.network[0].nic_groups.empty() ? part.network[0].nic : part.network[0].nic_groups[0].nic;
    // The gateway's own ports are never the bottleneck: each runs at least at the join rate.
    const double port = std::max(nic.bandwidth, spec.join_bandwidth);
    for (Vertex top : tops) ctx.t.add_link(top, gw, {LinkKind::kNetwork, port, nic.switch_latency});
    for (Vertex other : gateways) ctx.t.add_link(other, gw, {LinkKind::kJoin, spec.join_bandwidth, spec.join_latency});
    gateways.push_back(gw);
    first += part.nodes;
  }
  if (first != ctx.first + ctx.count) {
    throw ConfigError("the clusters hold " + std::to_string(first - ctx.first) + " nodes, the system has " +
                          std::to_string(ctx.count),
                      {}, "make cluster.inter_node.clusters[*].nodes add up to cluster.nodes");
  }
  return gateways;
}

}  // namespace exasim::topologies
