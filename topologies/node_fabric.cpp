// Inside a node: NVSwitch (every GPU one NVLink port into a non-blocking switch), xGMI full mesh
// (one link per GPU pair), or a PCIe tree (GPUs in pairs under PCIe switches, switches under the
// host bridge of their CPU socket, sockets joined by the inter-socket link). Then the NICs.
#include <set>
#include <string>

#include "hw/error.hpp"
#include "topologies/network_builders.hpp"

namespace exasim::topologies {

namespace {

// PCIe GPU servers put two x16 GPUs under each PCIe switch and two switches under each CPU
// socket (8-GPU Gen4 servers with Broadcom PEX88096 switches, e.g. Supermicro SYS-4029GP-TRT2,
// Dell XE8545): a typical layout, not a datasheet constant of the fabric.
constexpr int kGpusPerPcieSwitch = 2;
constexpr int kPcieSwitchesPerSocket = 2;
// Inter-socket link, B/s per direction. Estimate: AMD EPYC 7002 joins sockets with 4 xGMI x16
// links (~16 GB/s each per direction at 16 GT/s); Intel Ice Lake 3 UPI at 11.2 GT/s (~20.8 GB/s
// each). Both land near 64 GB/s.
constexpr double kInterSocketBandwidth = 64e9;

std::string node_name(int node) { return "n" + std::to_string(node); }

std::vector<Vertex> add_gpus(Topology& t, const Cluster& c, int node) {
  std::vector<Vertex> gpus;
  for (int l = 0; l < c.gpus_per_node; ++l) {
    const Vertex v = t.add_vertex({VertexKind::kGpu, node, 0, node_name(node) + "/gpu" + std::to_string(l)});
    t.add_gpu(v);
    gpus.push_back(v);
  }
  return gpus;
}

void nvswitch(Topology& t, const hw::FabricSpec& f, int node, const std::vector<Vertex>& gpus) {
  const Vertex sw = t.add_vertex({VertexKind::kNvSwitch, node, 0, node_name(node) + "/nvswitch"});
  t.set_node_switch(node, sw);
  for (Vertex g : gpus) t.add_link(g, sw, {LinkKind::kNvlink, f.bandwidth, f.latency / 2});
}

void xgmi_mesh(Topology& t, const hw::FabricSpec& f, const std::vector<Vertex>& gpus) {
  // The fabric bandwidth is per GPU over all its peer links; each peer gets one link's share.
  const int peers = std::max(1, std::max(f.max_gpus, static_cast<int>(gpus.size())) - 1);
  for (std::size_t a = 0; a < gpus.size(); ++a)
    for (std::size_t b = a + 1; b < gpus.size(); ++b)
      t.add_link(gpus[a], gpus[b], {LinkKind::kXgmi, f.bandwidth / peers, f.latency});
}

std::vector<Vertex> pcie_tree(Topology& t, const hw::FabricSpec& f, int node, const std::vector<Vertex>& gpus) {
  std::vector<Vertex> switch_of_gpu;
  std::vector<Vertex> bridges;
  Vertex sw = Topology::kNoVertex;
  for (std::size_t l = 0; l < gpus.size(); ++l) {
    const int s = static_cast<int>(l) / kGpusPerPcieSwitch;
    if (l % kGpusPerPcieSwitch == 0) {
      sw = t.add_vertex({VertexKind::kPcieSwitch, node, 0, node_name(node) + "/pcie-sw" + std::to_string(s)});
      if (s % kPcieSwitchesPerSocket == 0) {
        const std::string socket = std::to_string(bridges.size());
        bridges.push_back(t.add_vertex({VertexKind::kHostBridge, node, 0, node_name(node) + "/host" + socket}));
        if (bridges.size() > 1)
          t.add_link(bridges[0], bridges.back(), {LinkKind::kHost, kInterSocketBandwidth, f.latency});
      }
      t.add_link(sw, bridges.back(), {LinkKind::kPcie, f.bandwidth, f.latency / 2});
    }
    t.add_link(gpus[l], sw, {LinkKind::kPcie, f.bandwidth, f.latency / 2});
    switch_of_gpu.push_back(sw);
  }
  return switch_of_gpu;
}

}  // namespace

std::vector<Vertex> build_node_fabric(Topology& t, const Cluster& c, int node) {
  const std::vector<Vertex> gpus = add_gpus(t, c, node);
  const hw::FabricSpec& f = c.intra;
  if (f.kind == "pcie") return pcie_tree(t, f, node, gpus);
  if (f.kind == "xgmi") xgmi_mesh(t, f, gpus);
  else nvswitch(t, f, node, gpus);
  return gpus;
}

std::vector<NodeNics> attach_nics(Topology& t, const Cluster& c, const InterNode& spec, int first, int count,
                                  const std::vector<std::vector<Vertex>>& nic_side) {
  std::vector<NodeNics> out;
  std::size_t group = 0;
  int left_in_group = spec.nic_groups.empty() ? count : spec.nic_groups[0].nodes;
  for (int i = 0; i < count; ++i) {
    while (!spec.nic_groups.empty() && left_in_group == 0 && group + 1 < spec.nic_groups.size())
      left_in_group = spec.nic_groups[++group].nodes;
    --left_in_group;
    const bool grouped = !spec.nic_groups.empty();
    NodeNics n{{}, grouped ? spec.nic_groups[group].nic : spec.nic};
    const int k = grouped ? spec.nic_groups[group].nics_per_node : spec.nics_per_node;
    const int node = first + i;
    const int g = c.gpus_per_node;
    const double attach_bw = spec.gpu_nic_bandwidth > 0 ? spec.gpu_nic_bandwidth : n.nic.bandwidth;
    std::set<std::pair<Vertex, Vertex>> attached;
    for (int j = 0; j < k; ++j) {
      const Vertex nic = t.add_vertex({VertexKind::kNic, node, 0, node_name(node) + "/nic" + std::to_string(j)});
      n.ports.push_back(nic);
      for (int l = 0; l < g; ++l) {
        const bool serves = k <= g ? l * k / g == j : j * g / k == l;
        if (serves && attached.insert({nic_side[node][l], nic}).second)
          t.add_link(nic_side[node][l], nic, {LinkKind::kNicAttach, attach_bw, 0});
      }
    }
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace exasim::topologies
