#include "workloads/scenario/scenario.hpp"

#include <filesystem>

#include "hw/error.hpp"
#include "workloads/model/model_config.hpp"

namespace exasim::workloads {

namespace {

using config::Node;

const std::vector<std::string> kServingKeys = {"replicas", "parallelism",      "precision",      "kv_cache_dtype",
                                               "scheduler", "max_batch_tokens", "chunked_prefill", "disaggregation",
                                               "router",    "workload",         "slo"};

SimulationConfig read_simulation(const Node& n) {
  n.check_keys({"fidelity", "seed", "all_ranks"});
  SimulationConfig s;
  if (n.has("fidelity")) s.fidelity = n["fidelity"].as_choice({"analytical", "flow"});
  if (n.has("seed")) s.seed = static_cast<std::uint64_t>(n["seed"].as_nonnegative_int());
  if (n.has("all_ranks")) s.all_ranks = n["all_ranks"].as_bool();
  if (s.fidelity == "flow") n["fidelity"].fail("the flow-level network backend is not available yet", "use fidelity: analytical");
  if (s.all_ranks) n["all_ranks"].fail("simulating every rank is not available yet", "use all_ranks: false (symmetry)");
  return s;
}

models::CostRates read_cost(const Node& n) {
  n.check_keys({"gpu_hour_usd", "electricity_usd_per_kwh", "pue"});
  models::CostRates c;
  auto money = [](const Node& v) {
    const double x = v.as_number();
    if (x < 0) v.fail("a price must not be negative");
    return x;
  };
  if (n.has("gpu_hour_usd")) c.gpu_hour_usd = money(n["gpu_hour_usd"]);
  if (n.has("electricity_usd_per_kwh")) c.electricity_usd_per_kwh = money(n["electricity_usd_per_kwh"]);
  if (n.has("pue")) {
    c.pue = n["pue"].as_number();
    if (c.pue < 1) n["pue"].fail("PUE is facility power over IT power, at least 1");
  }
  return c;
}

models::Calibration read_calibration(const Node& n, const topologies::Cluster& cluster, const std::string& base_dir) {
  models::Calibration cal;
  cal.kernel = models::KernelParams::defaults_for(cluster.gpu);
  if (!n.defined()) return cal;
  if (n.is_map()) return models::apply_calibration(cal, n);
  std::filesystem::path p = n.as_string();
  if (p.is_relative() && !std::filesystem::exists(p)) p = std::filesystem::path(base_dir) / p;
  try {
    return models::load_calibration(cal, p.string());
  } catch (const IoError& e) {
    throw IoError("calibration file not found: " + p.string(), n.where(), "give a path relative to the scenario or the current folder");
  }
}

// Power of everything in a node but its GPUs, from the catalog server that carries this GPU.
double node_power_other(const hw::Catalog& catalog, const topologies::Cluster& c) {
  for (const std::string& name : catalog.names(hw::CatalogKind::kNode)) {
    const hw::NodeSpec node = catalog.node(config::load_string(name, "<catalog>"));
    if (node.gpu == c.gpu.name || c.gpu.name.starts_with(node.gpu + " ")) return node.power_other_w;
  }
  return 0;
}

}  // namespace

Scenario scenario_from_node(const Node& root, const hw::Catalog& catalog, const std::string& base_dir) {
  root.expect_map();
  root.check_keys({"name", "description", "cluster", "model", "training", "serving", "simulation", "calibration", "cost"});
  Scenario s;
  s.root = root;
  s.file = root.file();
  s.name = root.has("name") ? root["name"].as_string() : std::filesystem::path(s.file).stem().string();
  s.cluster = read_cluster(root.required("cluster"), catalog);
  if (s.cluster.node_power_other_w == 0) s.cluster.node_power_other_w = node_power_other(catalog, s.cluster);
  s.model = resolve_model(root.required("model"), catalog, base_dir);
  if (root.has("training") && root.has("serving"))
    root["serving"].fail("a scenario has either training: or serving:, not both", "split it into two scenarios");
  if (root.has("training")) {
    s.training = read_training(root["training"], s.cluster.gpu_count());
  } else if (root.has("serving")) {
    root["serving"].check_keys(kServingKeys);
    s.serving = true;
  } else {
    root.required("training");
  }
  if (root.has("simulation")) s.simulation = read_simulation(root["simulation"]);
  s.calibration = read_calibration(root["calibration"], s.cluster, base_dir);
  if (root.has("cost")) s.cost = read_cost(root["cost"]);
  return s;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides, const hw::Catalog& catalog) {
  Node root = config::load_file(path);
  if (!root.defined()) throw ConfigError("the scenario file is empty", {path, 1, ""}, "see configs/scenarios/ for examples");
  root.expect_map();
  for (const std::string& o : overrides) config::apply_override(root, o);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return scenario_from_node(root, catalog, dir.empty() ? "." : dir);
}

void rethrow_located(const PlanError& e, const Scenario& s) {
  // Walk down the key path as far as the file has it, so the line points at the culprit.
  Node at = s.root;
  const std::string& key = e.where().key;
  std::size_t start = 0;
  while (start < key.size()) {
    const auto dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!at.has(part)) break;
    at = at[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  SourceLocation where = at.where();
  where.key = key;
  throw PlanError(e.what(), where, e.hint());
}

}  // namespace exasim::workloads
