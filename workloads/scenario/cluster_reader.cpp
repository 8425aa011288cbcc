#include <algorithm>
#include <string>

#include "hw/cpu_device.hpp"
#include "hw/error.hpp"
#include "topologies/topology.hpp"
#include "topologies/topology_registry.hpp"
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

std::string topology_names() {
  std::string s;
  for (const auto& info : topologies::topology_table()) s += (s.empty() ? "" : ", ") + std::string(info.name);
  return s;
}

void read_shape(const Node& n, topologies::InterNode& in) {
  if (n.has("switch_radix")) {
    in.switch_radix = n["switch_radix"].as_positive_count();
    if (in.switch_radix < 2) n["switch_radix"].fail("a switch needs at least 2 ports");
  }
  if (n.has("tiers")) {
    in.tiers = n["tiers"].as_positive_count();
    if (in.tiers != 2 && in.tiers != 3) n["tiers"].fail("a fat-tree has 2 or 3 tiers");
  }
  if (n.has("dragonfly")) {
    const Node d = n["dragonfly"];
    d.check_keys({"groups", "routers_per_group", "global_links_per_router"});
    if (d.has("groups")) in.dragonfly.groups = d["groups"].as_positive_count();
    if (d.has("routers_per_group")) in.dragonfly.routers_per_group = d["routers_per_group"].as_positive_count();
    if (d.has("global_links_per_router"))
      in.dragonfly.global_links_per_router = d["global_links_per_router"].as_positive_count();
  }
  if (n.has("torus")) {
    const Node t = n["torus"];
    if (!t.is_sequence() || (t.size() != 2 && t.size() != 3)) t.fail("a torus has 2 or 3 dimensions", "e.g. torus: [4, 8]");
    for (std::size_t i = 0; i < t.size(); ++i) in.torus_dims.push_back(t.at(i).as_positive_count());
  }
}

topologies::InterNode read_inter_node(const Node& n, const hw::Catalog& catalog, int nodes);

void read_groups(const Node& n, const hw::Catalog& catalog, topologies::InterNode& in, int nodes) {
  if (n.has("nic_groups")) {
    const Node groups = n["nic_groups"];
    int total = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const Node g = groups.at(i);
      g.check_keys({"nodes", "nic", "nics_per_node"});
      topologies::NicGroup group;
      group.nodes = g.required("nodes").as_positive_count();
      group.nic = catalog.nic(g.required("nic"));
      if (g.has("nics_per_node")) group.nics_per_node = g["nics_per_node"].as_positive_count();
      total += group.nodes;
      in.nic_groups.push_back(group);
    }
    if (total != nodes) groups.fail("the NIC groups hold " + std::to_string(total) + " nodes, the network has " + std::to_string(nodes));
  }
  if (in.topology != "multi-cluster") return;
  const Node parts = n.required("clusters");
  int total = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Node p = parts.at(i);
    topologies::ClusterPart part;
    part.nodes = p.required("nodes").as_positive_count();
    part.network.push_back(read_inter_node(p, catalog, part.nodes));
    total += part.nodes;
    in.parts.push_back(std::move(part));
  }
  if (total != nodes) parts.fail("the clusters hold " + std::to_string(total) + " nodes, the system has " + std::to_string(nodes));
  const Node join = n.required("join");
  join.check_keys({"bandwidth", "latency"});
  in.join_bandwidth = join.required("bandwidth").as_positive_quantity(units::Dimension::kBandwidth);
  if (join.has("latency")) in.join_latency = join["latency"].as_nonnegative_quantity(units::Dimension::kTime);
}

// `inter_node` (or one cluster of a multi-cluster system, which also has `nodes`).
topologies::InterNode read_inter_node(const Node& n, const hw::Catalog& catalog, int nodes) {
  n.check_keys({"nodes", "topology", "nic", "nics_per_node", "gpu_nic_bandwidth", "oversubscription", "switch_radix",
                "tiers", "dragonfly", "torus", "nic_groups", "clusters", "join"});
  topologies::InterNode in;
  if (n.has("topology")) {
    in.topology = n["topology"].as_string();
    try {
      topologies::topology_info(in.topology);
    } catch (const ConfigError&) {
      n["topology"].fail("unknown inter-node topology '" + in.topology + "'", "use one of " + topology_names());
    }
  }
  const bool nic_needed = !n.has("nic_groups") && in.topology != "multi-cluster";
  if (nic_needed || n.has("nic")) in.nic = catalog.nic(n.required("nic"));
  if (n.has("nics_per_node")) in.nics_per_node = n["nics_per_node"].as_positive_count();
  if (n.has("gpu_nic_bandwidth"))
    in.gpu_nic_bandwidth = n["gpu_nic_bandwidth"].as_positive_quantity(units::Dimension::kBandwidth);
  if (n.has("oversubscription")) {
    in.oversubscription = n["oversubscription"].as_number();
    if (in.oversubscription < 1) n["oversubscription"].fail("oversubscription must be at least 1 (1 = non-blocking)");
  }
  read_shape(n, in);
  read_groups(n, catalog, in, nodes);
  return in;
}

// The GPU's own PCIe link bounds its path to the NIC unless the scenario says otherwise.
void fill_gpu_nic_bandwidth(topologies::InterNode& in, double pcie) {
  if (in.gpu_nic_bandwidth == 0) in.gpu_nic_bandwidth = pcie;
  for (topologies::ClusterPart& p : in.parts) fill_gpu_nic_bandwidth(p.network[0], pcie);
}

double gpu_pcie_bandwidth(const hw::GpuSpec& gpu, const hw::Catalog& catalog, const Node& where) {
  if (gpu.pcie.empty() || !catalog.contains(hw::CatalogKind::kLink, gpu.pcie)) return 0;
  return catalog.link(config::load_string(gpu.pcie, where.file())).bandwidth;
}

}  // namespace

topologies::HostSide read_host_side(const hw::NodeSpec& server, const hw::Catalog& catalog, const Node& where) {
  topologies::HostSide h;
  h.cpu = catalog.cpu(config::load_string(server.cpu, where.file()));
  h.cpus_per_node = std::max(1, server.cpus_per_node);
  h.memory_bytes = server.host_memory_bytes;
  if (!server.pcie.empty()) h.pcie_bandwidth = catalog.link(config::load_string(server.pcie, where.file())).bandwidth;
  h.nvme_read = server.nvme_read_bandwidth;
  h.nvme_write = server.nvme_write_bandwidth;
  return h;
}

topologies::Cluster read_cluster_description(const Node& n, const hw::Catalog& catalog) {
  n.check_keys({"gpu", "cpu", "gpus_per_node", "nodes", "node", "intra_node", "inter_node"});
  topologies::Cluster c;
  std::optional<hw::NodeSpec> server;
  if (n.has("node")) server = catalog.node(n["node"]);
  if (n.has("cpu")) {  // CPU sockets as the devices (gpus_per_node counts sockets)
    if (n.has("gpu") || server) n["cpu"].fail("a cluster's devices are GPUs or CPUs, not both", "give either gpu (or node) or cpu");
    c.gpu = hw::device_from_cpu(catalog.cpu(n["cpu"]), n["cpu"]);
  } else if (n.has("gpu")) c.gpu = catalog.gpu(n["gpu"]);
  else if (server) c.gpu = catalog.gpu(config::load_string(server->gpu, n.file()));
  else n.required("gpu");
  if (n.has("gpus_per_node")) c.gpus_per_node = n["gpus_per_node"].as_positive_count();
  else if (server) c.gpus_per_node = server->gpus_per_node;
  else n.required("gpus_per_node");
  c.nodes = n.required("nodes").as_positive_count();
  // Building the topology of a much larger cluster takes minutes and gigabytes before anything
  // else is checked: a count like 1e9 is a typo, not a plan.
  constexpr long long kMaxDevices = 1 << 20;
  if (static_cast<long long>(c.nodes) * c.gpus_per_node > kMaxDevices)
    n["nodes"].fail(std::to_string(c.nodes) + " nodes x " + std::to_string(c.gpus_per_node) + " GPUs is more than the " +
                        std::to_string(kMaxDevices) + " devices exasim builds a cluster of",
                    "use fewer nodes");
  std::string default_fabric = server ? server->fabric : c.gpu.node_fabric;
  if (c.gpu.host_cpu && !n.has("intra_node")) {
    // One socket per node moves nothing inside the node: any fabric will do. Several sockets talk
    // over UPI / Infinity Fabric, which the scenario must describe.
    if (c.gpus_per_node > 1)
      n.fail("CPU sockets of a node need cluster.intra_node, the link between them",
             "e.g. intra_node: {kind: pcie, bandwidth: 64 GB/s, latency: 1 us} for a UPI-class link");
    default_fabric = "pcie-gen5";
  }
  c.intra = read_fabric(n["intra_node"], catalog, default_fabric, n);
  if (c.intra.max_gpus > 0 && c.gpus_per_node > c.intra.max_gpus) {
    n["gpus_per_node"].fail(std::to_string(c.gpus_per_node) + " GPUs per node, but fabric " + c.intra.name + " joins at most " +
                            std::to_string(c.intra.max_gpus));
  }
  if (n.has("inter_node")) {
    c.inter = read_inter_node(n["inter_node"], catalog, c.nodes);
  } else if (server && c.nodes > 1) {
    topologies::InterNode in;
    in.nic = catalog.nic(config::load_string(server->nic, n.file()));
    in.nics_per_node = server->nics_per_node;
    c.inter = in;
  } else if (c.nodes > 1) {
    n.required("inter_node");  // throws: several nodes need a network
  }
  if (c.inter) fill_gpu_nic_bandwidth(*c.inter, gpu_pcie_bandwidth(c.gpu, catalog, n));
  if (server) c.node_power_other_w = server->power_other_w;
  if (server && !server->cpu.empty()) c.host = read_host_side(*server, catalog, n);
  return c;
}

void check_cluster_topology(const topologies::Cluster& c, const Node& n) {
  try {  // what only the whole topology can tell (a torus that does not match the node count, ...)
    topologies::build_topology(c);
  } catch (const ConfigError& e) {
    (n.has("inter_node") ? n["inter_node"] : n).fail(e.what(), e.hint());
  }
}

topologies::Cluster read_cluster(const Node& n, const hw::Catalog& catalog) {
  topologies::Cluster c = read_cluster_description(n, catalog);
  check_cluster_topology(c, n);
  return c;
}

}  // namespace exasim::workloads
