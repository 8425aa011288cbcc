#include "models/collective/group_layout.hpp"

#include <algorithm>
#include <unordered_map>

namespace exasim::models {

std::vector<std::vector<int>> GroupLayout::by_node() const {
  std::vector<std::vector<int>> out;
  std::unordered_map<int, std::size_t> index;
  for (int m = 0; m < size(); ++m) {
    auto [it, fresh] = index.emplace(node[m], out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(m);
  }
  for (auto& members : out)
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return local[a] < local[b]; });
  return out;
}

bool GroupLayout::uniform() const {
  const auto nodes = by_node();
  return std::all_of(nodes.begin(), nodes.end(), [&](const auto& m) { return m.size() == nodes[0].size(); });
}

std::vector<int> GroupLayout::node_major() const {
  std::vector<int> out;
  for (const auto& members : by_node()) out.insert(out.end(), members.begin(), members.end());
  return out;
}

}  // namespace exasim::models
