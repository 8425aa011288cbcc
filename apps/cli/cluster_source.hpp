#pragma once
// A cluster named on the command line (`exasim collective --cluster C`, `exasim topo C`):
// a catalog node name (then `nodes` of it, on its NICs, fat-tree), or a YAML file with a
// `cluster:` section (a scenario or a cluster file), whose `calibration:` also applies.
#include <string>

#include "hw/catalog.hpp"
#include "models/collective/collective_params.hpp"
#include "topologies/cluster.hpp"

namespace exasim::cli {

struct ClusterSource {
  topologies::Cluster cluster;
  models::CollectiveParams collective;  // defaults, or the file's calibration
  std::string collective_source = "defaults";  // or the calibration file's path
  std::string name;
};

// `nodes` is used for a catalog node (0: 1 node); a file fixes its own node count.
ClusterSource load_cluster_source(const std::string& ref, int nodes, const hw::Catalog& catalog);

}  // namespace exasim::cli
