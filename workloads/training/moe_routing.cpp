#include "workloads/training/moe_routing.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "hw/error.hpp"

namespace exasim::workloads {

std::shared_ptr<const MoeRouting> read_moe_routing(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot read the MoE routing trace", {path, 0, "training.moe_routing_trace"}, "check the path");
  auto out = std::make_shared<MoeRouting>();
  out->file = path;
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      if (line != "layer,expert,tokens")
        throw ConfigError("the header is \"" + line + "\"", {path, number, "training.moe_routing_trace"},
                          "the first line must be layer,expert,tokens");
      header = true;
      continue;
    }
    std::stringstream row(line);
    std::string cell[3];
    int n = 0;
    while (n < 3 && std::getline(row, cell[n], ',')) ++n;
    std::string extra;
    if (n != 3 || std::getline(row, extra, ','))
      throw ConfigError("expected 3 columns (layer,expert,tokens), got \"" + line + "\"", {path, number, "training.moe_routing_trace"},
                        "one expert of one layer per line");
    auto whole = [&](const std::string& s, const char* what) {
      std::size_t used = 0;
      long v = -1;
      try {
        v = std::stol(s, &used);
      } catch (const std::exception&) {
      }
      if (used != s.size() || v < 0 || v > 1000000)
        throw ConfigError(std::string(what) + " \"" + s + "\" is not an index", {path, number, "training.moe_routing_trace"},
                          "give a 0-based integer");
      return static_cast<std::size_t>(v);
    };
    const std::size_t layer = whole(cell[0], "layer"), expert = whole(cell[1], "expert");
    double tokens = -1;
    std::size_t used = 0;
    try {
      tokens = std::stod(cell[2], &used);
    } catch (const std::exception&) {
    }
    if (used != cell[2].size() || !(tokens >= 0) || !std::isfinite(tokens))
      throw ConfigError("tokens \"" + cell[2] + "\" is not a count", {path, number, "training.moe_routing_trace"},
                        "give the tokens the expert received (>= 0)");
    if (out->tokens.size() <= layer) out->tokens.resize(layer + 1);
    auto& row_tokens = out->tokens[layer];
    if (row_tokens.size() <= expert) row_tokens.resize(expert + 1, -1);
    if (row_tokens[expert] >= 0)
      throw ConfigError("layer " + cell[0] + " expert " + cell[1] + " is listed twice", {path, number, "training.moe_routing_trace"},
                        "one line per layer and expert");
    row_tokens[expert] = tokens;
  }
  if (!header) throw ConfigError("the trace is empty", {path, 1, "training.moe_routing_trace"}, "the first line must be layer,expert,tokens");
  return out;
}

double busiest_rank_load(const MoeBalance& b, int layer, int experts, int ep) {
  if (!b.routing && b.capacity_factor <= 0) return b.imbalance;
  const int local = experts / ep;
  std::vector<double> load(static_cast<std::size_t>(experts), 1.0);  // balanced: every expert its share
  double scale = b.imbalance;  // scalar: the busiest rank gets `imbalance` shares
  if (b.routing) {
    const std::vector<double>& t = b.routing->tokens.at(static_cast<std::size_t>(layer));
    double total = 0;
    for (double x : t) total += x;
    for (int e = 0; e < experts; ++e) load[e] = total > 0 ? t[e] * experts / total : 1.0;  // in balanced shares
    scale = 1;
  }
  double busiest = 0;
  for (int r = 0; r < ep; ++r) {
    double sum = 0;
    for (int e = r * local; e < (r + 1) * local; ++e) {
      double x = load[e] * scale;
      if (b.capacity_factor > 0) x = b.pad_to_capacity ? b.capacity_factor : std::min(x, b.capacity_factor);
      sum += x;
    }
    busiest = std::max(busiest, sum / local);
  }
  return busiest;
}

}  // namespace exasim::workloads
