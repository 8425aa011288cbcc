#pragma once
// Where a communicator's ranks sit on a cluster (`exasim collective --group-layout`):
//   packed       ranks 0 .. R-1 (fills nodes one after the other; the default)
//   spread       round robin over the nodes: rank i on node i mod N
//   NxK          N nodes x K GPUs each (local GPUs 0 .. K-1), e.g. 2x4 for R = 8
//   a,b,c,...    explicit global ranks
#include <cstdint>
#include <string>
#include <vector>

#include "topologies/cluster.hpp"

namespace exasim::sim {

// Throws ConfigError (key "--group-layout") when the layout is malformed or does not fit.
std::vector<std::uint32_t> place_group(const std::string& layout, int ranks, const topologies::Cluster& cluster);

}  // namespace exasim::sim
