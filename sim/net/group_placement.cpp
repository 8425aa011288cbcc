#include "sim/net/group_placement.hpp"

#include <charconv>
#include <set>

#include "hw/error.hpp"

namespace exasim::sim {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& hint) {
  throw ConfigError(what, {"<command line>", 0, "--group-layout"}, hint);
}

int number(std::string_view s, const std::string& layout) {
  int v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v < 0)
    fail("'" + layout + "' is not a group layout", "use packed, spread, NxK (e.g. 2x4) or a list of ranks 0,8,16");
  return v;
}

std::vector<std::uint32_t> explicit_ranks(const std::string& layout) {
  std::vector<std::uint32_t> out;
  std::size_t start = 0;
  while (start <= layout.size()) {
    const std::size_t comma = std::min(layout.find(',', start), layout.size());
    out.push_back(static_cast<std::uint32_t>(number(std::string_view(layout).substr(start, comma - start), layout)));
    start = comma + 1;
  }
  if (std::set<std::uint32_t>(out.begin(), out.end()).size() != out.size()) fail("a rank is listed twice", "list each rank once");
  return out;
}

}  // namespace

std::vector<std::uint32_t> place_group(const std::string& layout, int ranks, const topologies::Cluster& c) {
  const int g = c.gpus_per_node, n = c.nodes;
  std::vector<std::uint32_t> out;
  if (layout.find(',') != std::string::npos) {
    out = explicit_ranks(layout);
  } else if (layout == "packed" || layout.empty()) {
    for (int r = 0; r < ranks; ++r) out.push_back(static_cast<std::uint32_t>(r));
  } else if (layout == "spread") {
    for (int r = 0; r < ranks; ++r) out.push_back(static_cast<std::uint32_t>((r % n) * g + r / n));
    if (ranks > n * g) fail("the group is larger than the cluster", "use fewer ranks or more nodes");
  } else if (const auto x = layout.find('x'); x != std::string::npos) {
    const int nodes = number(std::string_view(layout).substr(0, x), layout);
    const int per = number(std::string_view(layout).substr(x + 1), layout);
    if (nodes * per != ranks) fail(layout + " places " + std::to_string(nodes * per) + " ranks, not " + std::to_string(ranks), "make N x K equal --ranks");
    if (nodes > n || per > g) fail(layout + " does not fit " + std::to_string(n) + " nodes of " + std::to_string(g) + " GPUs", "use a larger cluster (--nodes)");
    for (int a = 0; a < nodes; ++a)
      for (int b = 0; b < per; ++b) out.push_back(static_cast<std::uint32_t>(a * g + b));
  } else {
    fail("'" + layout + "' is not a group layout", "use packed, spread, NxK (e.g. 2x4) or a list of ranks 0,8,16");
  }
  for (std::uint32_t r : out)
    if (r >= static_cast<std::uint32_t>(c.gpu_count()))
      fail("rank " + std::to_string(r) + " is outside the cluster of " + std::to_string(c.gpu_count()) + " GPUs", "use a larger cluster (--nodes)");
  if (static_cast<int>(out.size()) != ranks && layout.find(',') == std::string::npos)
    fail("the group has " + std::to_string(out.size()) + " ranks, not " + std::to_string(ranks), "check --ranks");
  return out;
}

}  // namespace exasim::sim
