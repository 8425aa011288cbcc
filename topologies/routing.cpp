#include "topologies/routing.hpp"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/visitors.hpp>

#include <limits>
#include <stdexcept>

namespace exasim::topologies {

namespace {

constexpr std::uint16_t kFar = std::numeric_limits<std::uint16_t>::max();

}  // namespace

// A vertex a route towards `dst` may reach: one it may pass through, or `dst` itself; inside a
// node, only the node's own fabric (no NIC, no network).
bool Router::usable(Vertex v, Vertex dst, bool in_node) const {
  if (v == dst) return true;
  if (!t_.transit(v)) return false;
  if (!in_node) return true;
  const VertexInfo& info = t_.vertex(v);
  return info.node == t_.vertex(dst).node && info.kind != VertexKind::kNic;
}

namespace {

// Links a route towards `dst` may use: both ends usable.
struct TowardsDst {
  const Router* router = nullptr;
  const Graph* g = nullptr;
  Vertex dst = 0;
  bool in_node = false;
  bool operator()(const Graph::edge_descriptor& e) const {
    return router->usable(boost::source(e, *g), dst, in_node) && router->usable(boost::target(e, *g), dst, in_node);
  }
};

}  // namespace

Router::Router(const Topology& t) : t_(t), rank_of_(t.vertex_count(), -1) {
  for (int r = 0; r < t.gpu_count(); ++r) rank_of_[t.gpu(r)] = r;
}

std::uint64_t Router::key_of(Vertex v) const {
  return rank_of_[v] >= 0 ? static_cast<std::uint64_t>(rank_of_[v]) : static_cast<std::uint64_t>(v);
}

const std::vector<std::uint16_t>& Router::distances_to(Vertex dst, bool in_node) {
  const std::uint64_t key = (static_cast<std::uint64_t>(dst) << 1) | (in_node ? 1 : 0);
  if (auto it = dist_.find(key); it != dist_.end()) return it->second;
  std::vector<std::uint16_t> dist(t_.vertex_count(), kFar);
  dist[dst] = 0;
  boost::filtered_graph<Graph, TowardsDst> fg(t_.graph(), TowardsDst{this, &t_.graph(), dst, in_node});
  boost::breadth_first_search(
      fg, dst,
      boost::visitor(boost::make_bfs_visitor(boost::record_distances(dist.data(), boost::on_tree_edge()))));
  return dist_.emplace(key, std::move(dist)).first->second;
}

std::span<const ChannelId> Router::route(Vertex src, Vertex dst) {
  const std::uint64_t pair = (static_cast<std::uint64_t>(src) << 32) | static_cast<std::uint64_t>(dst);
  if (auto it = routes_.find(pair); it != routes_.end()) return it->second;
  const Graph& g = t_.graph();
  const bool in_node = g[src].node >= 0 && g[src].node == g[dst].node;
  const std::vector<std::uint16_t>& dist = distances_to(dst, in_node);
  std::vector<ChannelId> path;
  const std::uint64_t key = key_of(dst);
  std::uint64_t stride = 1;
  std::vector<Graph::edge_descriptor> best;
  for (Vertex u = src; u != dst;) {
    // Next hops one step closer; from the source (which may be a GPU off the BFS) the nearest.
    best.clear();
    std::uint16_t nearest = kFar;
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      const Vertex v = boost::target(*e, g);
      if (!usable(v, dst, in_node) || dist[v] == kFar) continue;
      if (dist[v] < nearest) {
        nearest = dist[v];
        best.clear();
      }
      if (dist[v] == nearest) best.push_back(*e);
    }
    if (best.empty()) {
      throw std::runtime_error("Router: no route from '" + g[src].name + "' to '" + g[dst].name + "'");
    }
    const auto& e = best[best.size() == 1 ? 0 : (key / stride) % best.size()];
    stride *= best.size();
    path.push_back(t_.channel(g[e].id, u));
    u = boost::target(e, g);
  }
  return routes_.emplace(pair, std::move(path)).first->second;
}

double Router::latency(std::span<const ChannelId> route) const {
  double sum = 0;
  for (ChannelId c : route) sum += t_.link(t_.link_of(c)).latency;
  return sum;
}

}  // namespace exasim::topologies
