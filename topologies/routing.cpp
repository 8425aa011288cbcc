#include "topologies/routing.hpp"

#include <algorithm>
#include <stdexcept>

namespace exasim::topologies {

// A vertex a route towards `dst` may reach: one it may pass through, or `dst` itself; inside a
// node, only the node's own fabric (no NIC, no network).
bool Router::usable(Vertex v, Vertex dst, bool in_node) const {
  if (v == dst) return true;
  if (!t_.transit(v)) return false;
  if (!in_node) return true;
  const VertexInfo& info = t_.vertex(v);
  return info.node == t_.vertex(dst).node && info.kind != VertexKind::kNic;
}

Router::Router(const Topology& t)
    : t_(t),
      rank_of_(t.vertex_count(), -1),
      core_index_(t.vertex_count(), kNone),
      local_index_(t.vertex_count(), kNone),
      exit_(t.vertex_count(), Topology::kNoVertex),
      exit_hops_(t.vertex_count(), kFar) {
  const Graph& g = t.graph();
  const std::size_t n_vertices = t.vertex_count();
  for (int r = 0; r < t.gpu_count(); ++r) rank_of_[t.gpu(r)] = r;
  int nodes = t.nodes();
  for (Vertex v = 0; v < n_vertices; ++v) nodes = std::max(nodes, g[v].node + 1);
  node_vertices_.resize(static_cast<std::size_t>(nodes));
  for (Vertex v = 0; v < n_vertices; ++v) {
    if (g[v].node < 0) continue;
    auto& members = node_vertices_[static_cast<std::size_t>(g[v].node)];
    local_index_[v] = static_cast<std::int32_t>(members.size());
    members.push_back(v);
  }
  // Seal test, per node: every connected piece of the node's transit vertices may touch at most
  // one vertex outside the node, and that one a network vertex.
  node_sealed_.assign(node_vertices_.size(), 1);
  std::vector<char> seen(n_vertices, 0);
  std::vector<Vertex> piece, frontier;
  for (std::size_t n = 0; n < node_vertices_.size(); ++n) {
    const int node = static_cast<int>(n);
    for (Vertex start : node_vertices_[n]) {
      if (seen[start] || !t.transit(start)) continue;
      piece.assign(1, start);
      seen[start] = 1;
      Vertex exit = Topology::kNoVertex;
      bool open = false;
      for (std::size_t i = 0; i < piece.size(); ++i) {
        for (auto [e, end] = boost::out_edges(piece[i], g); e != end; ++e) {
          const Vertex w = boost::target(*e, g);
          if (g[w].node != node) {
            open = open || g[w].node >= 0 || (exit != Topology::kNoVertex && exit != w);
            exit = w;
          } else if (t.transit(w) && !seen[w]) {
            seen[w] = 1;
            piece.push_back(w);
          }
        }
      }
      if (open) {
        node_sealed_[n] = 0;
        continue;
      }
      if (exit == Topology::kNoVertex) continue;  // e.g. an NVSwitch: no route leaves through it
      // Hops from each vertex of the piece to `exit`, by a search from the vertices next to it.
      frontier.clear();
      for (Vertex v : piece) {
        exit_[v] = exit;
        if (boost::edge(v, exit, g).second) exit_hops_[v] = 1, frontier.push_back(v);
      }
      for (std::size_t i = 0; i < frontier.size(); ++i) {
        const Vertex u = frontier[i];
        for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
          const Vertex w = boost::target(*e, g);
          if (g[w].node == node && t.transit(w) && exit_hops_[w] == kFar) {
            exit_hops_[w] = static_cast<std::uint16_t>(exit_hops_[u] + 1);
            frontier.push_back(w);
          }
        }
      }
    }
  }
  // A GPU linked straight into another node's fabric opens both nodes (no builder does this).
  for (int r = 0; r < t.gpu_count(); ++r) {
    const Vertex v = t.gpu(r);
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
      const int other = g[boost::target(*e, g)].node;
      if (other >= 0 && other != g[v].node) {
        node_sealed_[static_cast<std::size_t>(other)] = 0;
        if (g[v].node >= 0) node_sealed_[static_cast<std::size_t>(g[v].node)] = 0;
      }
    }
  }
  for (Vertex v = 0; v < n_vertices; ++v) {
    if (g[v].node >= 0 && node_sealed_[static_cast<std::size_t>(g[v].node)]) continue;
    core_index_[v] = static_cast<std::int32_t>(core_.size());
    core_.push_back(v);
    exit_[v] = Topology::kNoVertex;
  }
  core_row_.assign(1, 0);
  for (Vertex u : core_) {
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      const Vertex w = boost::target(*e, g);
      if (core_index_[w] != kNone) core_adj_.push_back(w);
    }
    core_row_.push_back(static_cast<std::uint32_t>(core_adj_.size()));
  }
}

std::uint64_t Router::key_of(Vertex v) const {
  return rank_of_[v] >= 0 ? static_cast<std::uint64_t>(rank_of_[v]) : static_cast<std::uint64_t>(v);
}

// Breadth-first search from dst over the vertices a route to it may use: with in_node, or when
// dst sits in a sealed node, over dst's node (routes that stay inside it); else over the core.
void Router::search(Vertex dst, bool in_node, std::vector<std::uint16_t>& dist) {
  const Graph& g = t_.graph();
  const int node = g[dst].node;
  const bool core = !in_node && core_index_[dst] != kNone;
  auto index = [&](Vertex v) -> std::int32_t {
    if (core) return core_index_[v];
    return g[v].node == node ? local_index_[v] : kNone;
  };
  dist.assign(core ? core_.size() : node_vertices_[static_cast<std::size_t>(node)].size(), kFar);
  dist[static_cast<std::size_t>(index(dst))] = 0;
  queue_.assign(1, dst);
  for (std::size_t q = 0; q < queue_.size(); ++q) {
    const Vertex u = queue_[q];
    const auto d = static_cast<std::uint16_t>(dist[static_cast<std::size_t>(index(u))] + 1);
    auto visit = [&](Vertex w) {
      const std::int32_t i = index(w);
      if (i == kNone || dist[static_cast<std::size_t>(i)] != kFar || !usable(w, dst, in_node)) return;
      dist[static_cast<std::size_t>(i)] = d;
      queue_.push_back(w);
    };
    if (core) {
      const auto c = static_cast<std::size_t>(core_index_[u]);
      for (std::uint32_t k = core_row_[c]; k < core_row_[c + 1]; ++k) visit(core_adj_[k]);
    } else {
      for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) visit(boost::target(*e, g));
    }
  }
}

const std::vector<std::uint16_t>& Router::core_field(Vertex from) {
  if (auto it = core_fields_.find(from); it != core_fields_.end()) return it->second;
  std::vector<std::uint16_t> dist;
  search(from, false, dist);
  return core_fields_.emplace(from, std::move(dist)).first->second;
}

const Router::Field& Router::field(Vertex dst, bool in_node) {
  const std::uint64_t key = (static_cast<std::uint64_t>(dst) << 1) | (in_node ? 1 : 0);
  if (auto it = fields_.find(key); it != fields_.end()) return it->second;
  const Graph& g = t_.graph();
  Field f;
  f.dst = dst;
  f.in_node = in_node;
  f.node_local = !in_node && core_index_[dst] == kNone;
  search(dst, in_node, f.dist);
  if (f.node_local) {
    // Where routes from outside enter dst's node: the exit switch of each piece of its fabric
    // next to dst (or holding it), or a network vertex dst is linked to itself.
    const int node = g[dst].node;
    std::vector<std::pair<Vertex, std::uint16_t>> entries;
    auto enter = [&](Vertex x, std::uint16_t hops) {
      for (auto& [y, h] : entries)
        if (y == x) return void(h = std::min(h, hops));
      entries.emplace_back(x, hops);
    };
    if (t_.transit(dst) && exit_[dst] != Topology::kNoVertex) enter(exit_[dst], exit_hops_[dst]);
    for (auto [e, end] = boost::out_edges(dst, g); e != end; ++e) {
      const Vertex w = boost::target(*e, g);
      if (core_index_[w] != kNone) enter(w, 1);
      else if (g[w].node == node && t_.transit(w) && exit_[w] != Topology::kNoVertex)
        enter(exit_[w], static_cast<std::uint16_t>(exit_hops_[w] + 1));
    }
    for (const auto& [x, hops] : entries) f.exits.emplace_back(&core_field(x), hops);
    // A vertex of dst's node reaches dst inside the node, or out through its exit and back.
    for (Vertex v : node_vertices_[static_cast<std::size_t>(node)]) {
      if (exit_[v] == Topology::kNoVertex) continue;
      const std::uint16_t via = core_distance(f, core_index_[exit_[v]]);
      std::uint16_t& d = f.dist[static_cast<std::size_t>(local_index_[v])];
      if (via != kFar) d = std::min(d, static_cast<std::uint16_t>(via + exit_hops_[v]));
    }
  }
  return fields_.emplace(key, std::move(f)).first->second;
}

std::uint16_t Router::core_distance(const Field& f, std::int32_t core_index) const {
  const auto c = static_cast<std::size_t>(core_index);
  if (!f.node_local) return f.dist[c];
  std::uint16_t best = kFar;
  for (const auto& [from, hops] : f.exits)
    if ((*from)[c] != kFar) best = std::min(best, static_cast<std::uint16_t>((*from)[c] + hops));
  return best;
}

// Hops from v to the field's destination (kFar: unreachable or not usable on the way).
std::uint16_t Router::distance(const Field& f, Vertex v) const {
  const Graph& g = t_.graph();
  const int node = g[f.dst].node;
  if (f.in_node) return g[v].node == node ? f.dist[static_cast<std::size_t>(local_index_[v])] : kFar;
  if (core_index_[v] != kNone) return core_distance(f, core_index_[v]);
  if (f.node_local && g[v].node == node) return f.dist[static_cast<std::size_t>(local_index_[v])];
  // A vertex of another sealed node: through the one switch its piece of fabric touches.
  const Vertex x = exit_[v];
  if (x == Topology::kNoVertex) return kFar;
  const std::uint16_t via = core_distance(f, core_index_[x]);
  return via == kFar ? kFar : static_cast<std::uint16_t>(via + exit_hops_[v]);
}

std::span<const ChannelId> Router::route(Vertex src, Vertex dst) {
  const std::uint64_t pair = (static_cast<std::uint64_t>(src) << 32) | static_cast<std::uint64_t>(dst);
  if (auto it = routes_.find(pair); it != routes_.end()) return it->second;
  const Graph& g = t_.graph();
  const bool in_node = g[src].node >= 0 && g[src].node == g[dst].node;
  const Field& f = field(dst, in_node);
  std::vector<ChannelId> path;
  const std::uint64_t key = key_of(dst);
  std::uint64_t stride = 1;
  std::vector<Graph::edge_descriptor> best;
  for (Vertex u = src; u != dst;) {
    // Next hops one step closer; from the source (which may be a GPU off the search) the nearest.
    best.clear();
    std::uint16_t nearest = kFar;
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      const Vertex v = boost::target(*e, g);
      if (!usable(v, dst, in_node)) continue;
      const std::uint16_t d = distance(f, v);
      if (d == kFar) continue;
      if (d < nearest) {
        nearest = d;
        best.clear();
      }
      if (d == nearest) best.push_back(*e);
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
