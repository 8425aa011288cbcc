#pragma once
// Where the members of a communicator sit: the node and the GPU index within the node of each
// member, in the group's rank order. Algorithms build their rings and trees from this; they
// never see the topology, so one schedule serves every network it runs on.
#include <vector>

namespace exasim::models {

struct GroupLayout {
  std::vector<int> node;   // per member: cluster node index
  std::vector<int> local;  // per member: GPU index within its node
  bool switch_reduction = false;  // the node fabric reduces in the switch (NVLS)
  bool mesh = false;              // the node fabric links every GPU pair directly (xGMI)

  int size() const { return static_cast<int>(node.size()); }
  // Members grouped by node: nodes in order of first appearance, members by local index.
  std::vector<std::vector<int>> by_node() const;
  int nodes() const { return static_cast<int>(by_node().size()); }
  // Every node holds the same number of members (hierarchical algorithms need it).
  bool uniform() const;
  // All members, node by node (the order of rings and halving-doubling partners).
  std::vector<int> node_major() const;
};

}  // namespace exasim::models
