#pragma once
// Human-readable views of a topology: a summary (what `exasim topo --summary` prints) and
// Graphviz dot (`--dot`).
#include <ostream>
#include <string>

#include "topologies/cluster.hpp"
#include "topologies/topology.hpp"

namespace exasim::topologies {

// Counts of vertices and links by kind (switches by tier), total switch count, and sample routes
// (hops, latency, bottleneck bandwidth) from rank 0 to a rank on the same node, on the next node
// and on the last node.
std::string summarize(const Topology& t, const Cluster& c);
// One dot vertex per topology vertex (GPUs and node parts grouped per node) and one edge per link,
// labelled with its bandwidth (and count when aggregated).
void write_dot(std::ostream& out, const Topology& t);

}  // namespace exasim::topologies
