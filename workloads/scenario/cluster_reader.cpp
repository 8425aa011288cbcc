#include <string>

#include "workloads/scenario/scenario.hpp"

namespace exasim::workloads {

namespace {

using config::Node;

// `intra_node`: a fabric name, {base: NAME, ...}, or an inline {bandwidth, latency} (kind
// defaults to nvswitch for an inline fabric).
hw::FabricSpec read_fabric(const Node& n, const hw::Catalog& catalog, const std::string& default_name,
                           const Node& where) {
  if (!n.defined()) {
    if (default_name.empty()) where.fail("the GPU names no default node fabric", "give cluster.intra_node");
    return catalog.fabric(config::load_string(default_name, where.file()));
  }
  if (n.is_map() && !n.has("base") && !n.has("kind")) {
    auto layers = std::vector<Node>{config::load_string("{kind: nvswitch}", n.file()), n};
    return hw::fabric_from_layers("inline", layers);
  }
  return catalog.fabric(n);
}

topologies::InterNode read_inter_node(const Node& n, const hw::Catalog& catalog) {
  n.check_keys({"topology", "nic", "nics_per_node", "oversubscription"});
  topologies::InterNode in;
  if (n.has("topology"))
    in.topology = n["topology"].as_choice({"fat-tree", "rail-optimized", "single-switch", "dragonfly", "torus"});
  in.nic = catalog.nic(n.required("nic"));
  if (n.has("nics_per_node")) in.nics_per_node = static_cast<int>(n["nics_per_node"].as_positive_int());
  if (n.has("oversubscription")) {
    in.oversubscription = n["oversubscription"].as_number();
    if (in.oversubscription < 1) n["oversubscription"].fail("oversubscription must be at least 1 (1 = non-blocking)");
  }
  return in;
}

}  // namespace

topologies::Cluster read_cluster(const Node& n, const hw::Catalog& catalog) {
  n.check_keys({"gpu", "gpus_per_node", "nodes", "node", "intra_node", "inter_node"});
  topologies::Cluster c;
  std::optional<hw::NodeSpec> server;
  if (n.has("node")) server = catalog.node(n["node"]);
  if (n.has("gpu")) c.gpu = catalog.gpu(n["gpu"]);
  else if (server) c.gpu = catalog.gpu(config::load_string(server->gpu, n.file()));
  else n.required("gpu");
  if (n.has("gpus_per_node")) c.gpus_per_node = static_cast<int>(n["gpus_per_node"].as_positive_int());
  else if (server) c.gpus_per_node = server->gpus_per_node;
  else n.required("gpus_per_node");
  c.nodes = static_cast<int>(n.required("nodes").as_positive_int());
  c.intra = read_fabric(n["intra_node"], catalog, server ? server->fabric : c.gpu.node_fabric, n);
  if (c.intra.max_gpus > 0 && c.gpus_per_node > c.intra.max_gpus) {
    n["gpus_per_node"].fail(std::to_string(c.gpus_per_node) + " GPUs per node, but fabric " + c.intra.name + " joins at most " +
                            std::to_string(c.intra.max_gpus));
  }
  if (n.has("inter_node")) {
    c.inter = read_inter_node(n["inter_node"], catalog);
  } else if (server && c.nodes > 1) {
    c.inter = topologies::InterNode{"fat-tree", catalog.nic(config::load_string(server->nic, n.file())), server->nics_per_node, 1.0};
  } else if (c.nodes > 1) {
    n.required("inter_node");  // throws: several nodes need a network
  }
  if (server) c.node_power_other_w = server->power_other_w;
  return c;
}

}  // namespace exasim::workloads
