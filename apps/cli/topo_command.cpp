// `exasim topo C [--summary | --dot]`: the topology a scenario (or catalog node) builds.
#include <iostream>
#include <string>

#include "apps/cli/cluster_source.hpp"
#include "apps/cli/commands.hpp"
#include "topologies/topology.hpp"
#include "topologies/topology_print.hpp"
#include "topologies/topology_registry.hpp"

namespace exasim::cli {

namespace {

struct TopoOptions {
  std::string cluster;
  int nodes = 0;
  bool summary = false;
  bool dot = false;
};

int run_topo(const Context& ctx, const TopoOptions& o) {
  const hw::Catalog catalog = hw::Catalog::load(ctx.configs_dir);
  const ClusterSource src = load_cluster_source(o.cluster, o.nodes, catalog);
  const topologies::Topology t = topologies::build_topology(src.cluster);
  if (o.dot) topologies::write_dot(std::cout, t);
  else std::cout << topologies::summarize(t, src.cluster);
  return 0;
}

std::string help_footer() {
  std::string s = "\nInter-node topologies (cluster.inter_node.topology):\n";
  for (const auto& info : topologies::topology_table())
    s += "  " + std::string(info.name) + ": " + std::string(info.help) + "\n";
  return s;
}

}  // namespace

void add_topo_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<TopoOptions>();
  CLI::App* cmd = app.add_subcommand("topo", "print the interconnect topology of a scenario or catalog node");
  cmd->footer(help_footer());
  cmd->add_option("CLUSTER", o->cluster, "scenario or cluster YAML file, or a catalog node (e.g. dgx-a100)")->required();
  cmd->add_option("--nodes", o->nodes, "nodes of a catalog node (default 1)");
  auto* summary = cmd->add_flag("--summary", o->summary, "counts of vertices and links, sample routes (default)");
  cmd->add_flag("--dot", o->dot, "Graphviz dot on stdout")->excludes(summary);
  cmd->callback([o, &ctx] { ctx.handler = [o, &ctx] { return run_topo(ctx, *o); }; });
}

}  // namespace exasim::cli
