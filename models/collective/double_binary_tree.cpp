// NCCL's double binary tree all-reduce: two binary trees over the nodes, each carrying half of
// the data, built so that a node interior in one tree is a leaf in the other (ncclGetDtree);
// inside a node the members form a chain to the node's tree representative; one such pair of
// trees per channel. Reduce up the
// trees, then broadcast down, each pipelined: the data crosses every link once per direction
// and each pass pays one step latency per tree level and chain hop.
#include <algorithm>

#include "models/collective/algorithm.hpp"

namespace exasim::models {

namespace {

// ncclGetBtree: the parent of rank r in the binary tree over n ranks rooted at 0.
int btree_parent(int n, int r) {
  if (r == 0) return -1;
  int bit = 1;
  while (bit < n && (bit & r) == 0) bit <<= 1;
  int up = (r ^ bit) | (bit << 1);
  if (up >= n) up = r ^ bit;
  return up;
}

// ncclGetDtree: tree 1 is tree 0 shifted by one rank (odd n) or mirrored (even n).
int dtree_parent(int n, int r, int tree) {
  if (tree == 0) return btree_parent(n, r);
  if (n % 2 == 1) {
    const int p = btree_parent(n, (r - 1 + n) % n);
    return p < 0 ? -1 : (p + 1) % n;
  }
  const int p = btree_parent(n, n - 1 - r);
  return p < 0 ? -1 : n - 1 - p;
}

int tree_depth(int n, int tree) {
  int deepest = 0;
  for (int r = 0; r < n; ++r) {
    int d = 0;
    for (int v = r; dtree_parent(n, v, tree) >= 0; v = dtree_parent(n, v, tree)) ++d;
    deepest = std::max(deepest, d);
  }
  return deepest;
}

// One pass over both trees of every channel: toward the roots (reduce) or away from them
// (broadcast). As NCCL does, each channel (one per member of the smallest node) runs its own
// pair of trees on its share of the data, entering each node at a different member (NIC): tree 0
// of channel c at member c, tree 1 at member c + k/2; inside a node a chain through all members
// ends at that representative.
Phase tree_pass(const std::vector<std::vector<int>>& nodes, bool up) {
  const int m = static_cast<int>(nodes.size());
  std::size_t k = nodes[0].size();
  for (const auto& members : nodes) k = std::min(k, members.size());
  const double share = 0.5 / static_cast<double>(k);
  PhaseBuilder b;
  auto add = [&](int from, int to) { up ? b.add(from, to, share) : b.add(to, from, share); };
  auto rep = [&](const std::vector<int>& members, std::size_t c, int tree) {
    return members[(c + (tree == 1 ? members.size() / 2 : 0)) % members.size()];
  };
  std::size_t chain = 0;
  for (std::size_t c = 0; c < k; ++c) {
    for (int tree = 0; tree < 2; ++tree) {
      for (int v = 0; v < m; ++v) {
        const auto& members = nodes[v];
        const std::size_t n = members.size();
        const std::size_t r = static_cast<std::size_t>(std::find(members.begin(), members.end(), rep(members, c, tree)) - members.begin());
        for (std::size_t j = 1; j < n; ++j) add(members[(r + j) % n], members[(r + j + 1) % n]);  // ends at the rep
        chain = std::max(chain, n - 1);
        const int p = dtree_parent(m, v, tree);
        if (p >= 0) add(rep(members, c, tree), rep(nodes[p], c, tree));
      }
    }
  }
  const int depth = std::max(tree_depth(m, 0), tree_depth(m, 1));
  return b.take(1, depth + static_cast<int>(chain));
}

}  // namespace

bool tree_supports(Collective op, const GroupLayout& g) { return op == Collective::kAllReduce && g.nodes() >= 2; }

Schedule tree_schedule(const ScheduleRequest& r) {
  const auto nodes = r.layout->by_node();
  Schedule s;
  s.algorithm = CollectiveAlgorithm::kTree;
  s.phases.push_back(tree_pass(nodes, true));
  s.phases.push_back(tree_pass(nodes, false));
  return s;
}

}  // namespace exasim::models
