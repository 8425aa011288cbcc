#include "workloads/planner/sweep_spec.hpp"

#include <algorithm>
#include <filesystem>

#include "hw/error.hpp"

namespace exasim::workloads::planner {

namespace {

using config::Node;

// A value as YAML text that apply_override parses back to the same node.
std::string yaml_text(const Node& v) {
  if (v.is_scalar()) return v.as_string();
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << v.yaml();
  return e.c_str();
}

void check_key(const Node& at, const std::string& key) {
  if (key.empty() || key.find('=') != std::string::npos || key.front() == '.' || key.back() == '.')
    at.fail("\"" + key + "\" is not a dotted scenario key", "write keys as training.micro_batch");
}

std::vector<SweepPoint> expand_grid(const Node& grid, std::vector<std::string>& keys) {
  grid.expect_map();
  std::vector<SweepPoint> points = {SweepPoint{}};
  for (const std::string& key : grid.keys()) {
    const Node values = grid[key];
    check_key(values, key);
    if (!values.is_sequence() || values.size() == 0) values.fail("a grid key takes a non-empty list of values", "for example [1, 2, 4]");
    keys.push_back(key);
    std::vector<SweepPoint> next;
    for (const SweepPoint& p : points)
      for (std::size_t i = 0; i < values.size(); ++i) {
        SweepPoint q = p;
        q.set.emplace_back(key, yaml_text(values.at(i)));
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  return points;
}

}  // namespace

std::vector<std::string> SweepPoint::overrides() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : set) out.push_back(k + "=" + v);
  return out;
}

SweepSpec load_sweep(const std::string& path) {
  const Node root = config::load_file(path);
  if (!root.defined()) throw ConfigError("the sweep file is empty", {path, 1, ""}, "see configs/sweeps/ for examples");
  root.expect_map();
  root.check_keys({"name", "description", "base", "set", "grid", "points", "columns"});
  SweepSpec s;
  s.name = root.has("name") ? root["name"].as_string() : std::filesystem::path(path).stem().string();
  std::filesystem::path base = root.required("base").as_string();
  if (base.is_relative()) base = std::filesystem::path(path).parent_path() / base;
  if (!std::filesystem::exists(base)) root["base"].fail("scenario not found: " + base.string(), "give a path relative to the sweep file");
  s.base = base.lexically_normal().string();
  std::vector<std::pair<std::string, std::string>> common;
  if (root.has("set")) {
    root["set"].expect_map();
    for (const std::string& key : root["set"].keys()) {
      check_key(root["set"][key], key);
      common.emplace_back(key, yaml_text(root["set"][key]));
    }
  }
  if (root.has("grid")) s.points = expand_grid(root["grid"], s.keys);
  if (root.has("points")) {
    const Node list = root["points"];
    if (!list.is_sequence()) list.fail("points is a list of {key: value} mappings");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Node p = list.at(i);
      p.expect_map();
      SweepPoint point;
      for (const std::string& key : p.keys()) {
        check_key(p[key], key);
        point.set.emplace_back(key, yaml_text(p[key]));
        if (std::find(s.keys.begin(), s.keys.end(), key) == s.keys.end()) s.keys.push_back(key);
      }
      s.points.push_back(std::move(point));
    }
  }
  if (s.points.empty()) root.fail("the sweep has no points", "add grid: or points:");
  for (SweepPoint& p : s.points) p.set.insert(p.set.begin(), common.begin(), common.end());
  if (root.has("columns")) {
    const Node c = root["columns"];
    if (!c.is_sequence() || c.size() == 0) c.fail("columns is a non-empty list of result keys", "for example [tokens_per_s, power.avg_w]");
    for (std::size_t i = 0; i < c.size(); ++i) s.columns.push_back(c.at(i).as_string());
  }
  return s;
}

const std::vector<std::string>& default_training_columns() {
  static const std::vector<std::string> c = {"iteration_time_s", "tokens_per_s", "mfu", "memory.peak_per_gpu_bytes", "power.per_gpu_w",
                                             "power.avg_w", "energy.per_token_j", "cost.usd_per_million_tokens"};
  return c;
}

const std::vector<std::string>& default_serving_columns() {
  static const std::vector<std::string> c = {"throughput_tokens_per_s", "requests_per_s", "ttft_s.p90", "tpot_s.p90", "slo_attainment",
                                             "power.avg_w", "energy.per_token_j", "cost.usd_per_million_tokens"};
  return c;
}

}  // namespace exasim::workloads::planner
