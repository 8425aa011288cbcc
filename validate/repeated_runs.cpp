#include "validate/repeated_runs.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace exasim::validate {

namespace {

void write_canonical(std::ostringstream& out, const YAML::Node& n, bool top) {
  if (n.IsMap()) {
    std::map<std::string, YAML::Node> sorted;
    for (const auto& kv : n) sorted.emplace(kv.first.as<std::string>(), kv.second);
    out << '{';
    for (const auto& [key, value] : sorted) {
      if (top && key == "name") continue;
      out << key << ':';
      write_canonical(out, value, false);
      out << ',';
    }
    out << '}';
  } else if (n.IsSequence()) {
    out << '[';
    for (const auto& item : n) {
      write_canonical(out, item, false);
      out << ',';
    }
    out << ']';
  } else if (n.IsScalar()) {
    out << '"' << n.Scalar() << '"';
  }
}

}  // namespace

std::string canonical_scenario(const ValidationCase& c) {
  std::ostringstream out;
  write_canonical(out, c.scenario.yaml(), true);
  return out.str();
}

std::vector<RepeatedRun> repeated_runs(const std::vector<ValidationCase>& cases, const std::vector<CaseResult>& results,
                                       double tolerance) {
  std::map<std::string, std::size_t> group_of;  // canonical scenario -> index into `groups`
  std::vector<RepeatedRun> groups;
  for (std::size_t i = 0; i < cases.size() && i < results.size(); ++i) {
    const double t = results[i].measured_iteration_s;
    if (t <= 0) continue;  // serving cases have no iteration time
    auto [it, fresh] = group_of.emplace(canonical_scenario(cases[i]), groups.size());
    if (fresh) groups.push_back({{}, t, t});
    RepeatedRun& g = groups[it->second];
    g.cases.push_back(i);
    g.shortest_s = std::min(g.shortest_s, t);
    g.longest_s = std::max(g.longest_s, t);
  }
  std::vector<RepeatedRun> out;
  for (RepeatedRun& g : groups)
    if (g.cases.size() > 1 && g.longest_s > g.shortest_s * (1 + tolerance)) out.push_back(std::move(g));
  return out;
}

}  // namespace exasim::validate
