#include "workloads/scenario/scenario.hpp"

#include <filesystem>
#include <memory>

#include "hw/error.hpp"
#include "models/calibration/default_calibration.hpp"
#include "models/cpu/cpu_calibration_file.hpp"
#include "models/cpu/cpu_kernels.hpp"
#include "models/cost/cost_config.hpp"
#include "workloads/model/model_config.hpp"

namespace exasim::workloads {

namespace {

using config::Node;

// `collective_algorithm`: one algorithm for every collective it can run, or a map by collective
// ({all_reduce: tree, all_gather: ring}); auto leaves the choice to the tuner.
models::AlgorithmChoice read_algorithms(const Node& n) {
  models::AlgorithmChoice choice;
  auto parse = [](const Node& v) {
    try {
      return models::parse_algorithm(v.as_string());
    } catch (const ConfigError& e) {
      v.fail(e.what(), e.hint());
    }
  };
  if (!n.is_map()) {
    choice.set_all(parse(n));
    return choice;
  }
  for (const std::string& key : n.keys()) {
    models::Collective op = models::Collective::kAllReduce;
    try {
      op = models::parse_collective(key);
    } catch (const ConfigError& e) {
      n[key].fail(e.what(), e.hint());
    }
    choice.set(op, parse(n[key]));
  }
  return choice;
}

SimulationConfig read_simulation(const Node& n) {
  n.check_keys({"fidelity", "seed", "all_ranks", "stragglers", "flow_model", "collective_algorithm"});
  SimulationConfig s;
  if (n.has("fidelity")) s.fidelity = n["fidelity"].as_choice({"analytical", "flow"});
  if (n.has("seed")) s.seed = static_cast<std::uint64_t>(n["seed"].as_nonnegative_int());
  if (n.has("all_ranks")) s.all_ranks = n["all_ranks"].as_bool();
  if (n.has("stragglers")) {
    const Node list = n["stragglers"];
    if (!list.is_sequence())
      list.fail("expected a list of {rank, slowdown}", "e.g. stragglers: [{rank: 5, slowdown: 1.2}]");
    if (!s.all_ranks && list.size() > 0) list.fail("stragglers need every rank simulated", "set simulation.all_ranks: true");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Node item = list.at(i);
      item.expect_map();
      item.check_keys({"rank", "slowdown"});
      Straggler st;
      st.rank = static_cast<std::uint32_t>(item.required("rank").as_count());
      st.slowdown = item.required("slowdown").as_number();
      if (!(st.slowdown > 0)) item["slowdown"].fail("slowdown must be > 0 (kernel time factor)", "e.g. 1.2 for 20% slower kernels");
      s.stragglers.push_back(st);
    }
  }
  s.network.backend = s.fidelity;
  if (n.has("flow_model")) s.network.flow_model = n["flow_model"].as_choice({"LV08", "CM02"});
  if (n.has("collective_algorithm")) s.network.algorithms = read_algorithms(n["collective_algorithm"]);
  return s;
}

models::CostRates read_cost(const Node& n) { return models::read_cost_rates(n); }  // models/cost/cost_config.hpp

// The catalog node a cluster is built of: its GPU (a GPU modified inline keeps its base's name)
// on its node fabric; "" when the catalog has none.
std::string catalog_node_of(const hw::Catalog& catalog, const std::string& gpu, const topologies::Cluster& c) {
  for (const std::string& name : catalog.names(hw::CatalogKind::kNode)) {
    const hw::NodeSpec node = catalog.node(config::load_string(name, "<catalog>"));
    if (node.gpu == gpu && node.fabric == c.intra.name) return name;
  }
  return {};
}

// The GPU's and its node's measured calibrations (configs/calibration/defaults.yaml) over `cal`.
// A GPU modified inline (`base: H100-SXM5-80GB`) keeps its base's: a what-if changes the
// datasheet, not how well the kernels use it.
models::Calibration with_measured(models::Calibration cal, const topologies::Cluster& cluster, const hw::Catalog& catalog) {
  if (cluster.gpu.host_cpu) return cal;  // a CPU device: its calibration is a cpu: file
  const std::string gpu = hw::Catalog::base_name(cluster.gpu.name);
  const std::string& dir = catalog.configs_dir();
  const std::string kernel_file = models::default_calibration(dir, models::CalibrationFor::kGpu, gpu);
  if (!kernel_file.empty()) cal = models::load_calibration(cal, kernel_file);
  const std::string node = catalog_node_of(catalog, gpu, cluster);
  const std::string node_file = node.empty() ? "" : models::default_calibration(dir, models::CalibrationFor::kNode, node);
  if (!node_file.empty()) cal = models::load_calibration(cal, node_file);
  return cal;
}

// One item of `calibration:` over `cal`: measured, an inline mapping, or the file it names.
models::Calibration apply_item(models::Calibration cal, const Node& n, const topologies::Cluster& cluster,
                               const hw::Catalog& catalog, const std::string& base_dir) {
  if (!n.is_map() && n.as_string() == "measured") return with_measured(std::move(cal), cluster, catalog);
  if (!n.is_map() && n.as_string() == "none")
    n.fail("none stands alone: it means the family defaults and nothing over them", "write calibration: none");
  config::Node file = n;  // an inline mapping, or the file it names (read once)
  if (!n.is_map()) {
    std::filesystem::path p = n.as_string();
    if (p.is_relative() && !std::filesystem::exists(p)) p = std::filesystem::path(base_dir) / p;
    try {
      file = config::load_file(p.string());
    } catch (const IoError& e) {
      throw IoError("calibration file not found: " + p.string(), n.where(),
                    "give a path relative to the scenario or the current folder, measured, or none");
    }
  }
  models::Calibration loaded = models::apply_calibration(std::move(cal), file);
  if (cluster.gpu.host_cpu && file.has("cpu")) {  // a CPU device: the fitted CPU models
    loaded.kernel.cpu =
        std::make_shared<const models::CpuParams>(models::serving_runtime(models::read_cpu_calibration(file["cpu"]).params));
    loaded.kernel.source = "CPU models (models/cpu/) calibrated by " + file.file();
  }
  return loaded;
}

// The parameters a scenario runs on: the datasheet + family defaults, then `calibration:` over
// them: a file, an inline mapping, `measured` (the GPU's and node's files that `exasim calibrate`
// wrote from measured tables, as exasim kernel and exasim collective use by default), or a list
// of these applied in order (e.g. [measured, ../framework.yaml]). `none`: the family defaults.
// Scenarios do not take `measured` by default yet: with it, published-run validation moves
// (training 9.6 -> 12.3% mean, serving 9.9 -> 8.9%) through parts not yet measured (README).
models::Calibration read_calibration(const Node& n, const topologies::Cluster& cluster, const hw::Catalog& catalog,
                                     const std::string& base_dir) {
  models::Calibration cal;
  cal.kernel = models::KernelParams::defaults_for(cluster.gpu);
  if (cluster.gpu.host_cpu) cal.kernel.source = "CPU models (models/cpu/) with defaults from the CPU spec";
  if (!n.defined() || (n.is_scalar() && n.as_string() == "none")) return cal;
  if (!n.is_sequence()) return apply_item(std::move(cal), n, cluster, catalog, base_dir);
  for (std::size_t i = 0; i < n.size(); ++i) cal = apply_item(std::move(cal), n.at(i), cluster, catalog, base_dir);
  return cal;
}

// Power of everything in a node but its GPUs, from the catalog server that carries this GPU.
double node_power_other(const hw::Catalog& catalog, const topologies::Cluster& c) {
  for (const std::string& name : catalog.names(hw::CatalogKind::kNode)) {
    const hw::NodeSpec node = catalog.node(config::load_string(name, "<catalog>"));
    if (node.gpu == c.gpu.name || c.gpu.name.starts_with(node.gpu + " ")) return node.power_other_w;
  }
  return 0;
}

// The host CPUs and PCIe of the catalog server that carries this GPU (the first in catalog order).
std::optional<topologies::HostSide> host_side(const hw::Catalog& catalog, const topologies::Cluster& c, const Node& where) {
  if (c.gpu.host_cpu) return std::nullopt;
  for (const std::string& name : catalog.names(hw::CatalogKind::kNode)) {
    const hw::NodeSpec node = catalog.node(config::load_string(name, "<catalog>"));
    if ((node.gpu == c.gpu.name || c.gpu.name.starts_with(node.gpu + " ")) && !node.cpu.empty())
      return read_host_side(node, catalog, where);
  }
  return std::nullopt;
}

}  // namespace

Scenario scenario_from_node(const Node& root, const hw::Catalog& catalog, const std::string& base_dir) {
  root.expect_map();
  root.check_keys({"name", "description", "cluster", "model", "training", "serving", "simulation", "calibration", "cost",
                  "plan_space", "power", "reliability"});  // plan_space: workloads/planner/plan_space.hpp; power: models/power/power_config.hpp
  Scenario s;
  s.root = root;
  s.file = root.file();
  s.name = root.has("name") ? root["name"].as_string() : std::filesystem::path(s.file).stem().string();
  s.cluster = read_cluster_description(root.required("cluster"), catalog);
  if (s.cluster.node_power_other_w == 0) s.cluster.node_power_other_w = node_power_other(catalog, s.cluster);
  if (!s.cluster.host) s.cluster.host = host_side(catalog, s.cluster, root["cluster"]);
  if (s.cluster.host) s.cluster.host->gpus_per_node = s.cluster.gpus_per_node;
  s.model = resolve_model(root.required("model"), catalog, base_dir);
  if (root.has("training") && root.has("serving"))
    root["serving"].fail("a scenario has either training: or serving:, not both", "split it into two scenarios");
  if (root.has("training")) {
    s.training = read_training(root["training"], s.cluster.gpu_count());
    // Training computes its GEMMs in this precision: a GPU without matrix units for it (fp8 before
    // Hopper, bf16 on Volta) cannot run the plan, and the models' 16-bit fallback would hide that.
    const hw::GpuSpec& gpu = s.cluster.gpu;
    if (!gpu.host_cpu && !gpu.supports(s.training->precision)) {
      std::string has;
      for (DType d : {DType::kFp4, DType::kFp8, DType::kBf16, DType::kFp16})
        if (gpu.supports(d)) has += (has.empty() ? "" : ", ") + std::string(dtype_name(d));
      root["training"]["precision"].fail(gpu.name + " has no " + std::string(dtype_name(s.training->precision)) +
                                             " matrix units",
                                         "use precision: " + (has.empty() ? std::string("fp32") : has));
    }
  } else if (root.has("serving")) {
    s.serving = true;  // read below, once the calibration is known
  } else {
    root.required("training");
  }
  if (root.has("simulation")) s.simulation = read_simulation(root["simulation"]);
  if (s.simulation.all_ranks && s.serving) {
    root["simulation"]["all_ranks"].fail("all_ranks applies to training (serving simulates each replica already)",
                                         "remove simulation.all_ranks");
  }
  for (std::size_t i = 0; i < s.simulation.stragglers.size(); ++i) {
    if (s.simulation.stragglers[i].rank >= static_cast<std::uint32_t>(s.cluster.gpu_count())) {
      root["simulation"]["stragglers"].at(i)["rank"].fail(
          "rank " + std::to_string(s.simulation.stragglers[i].rank) + " is not in the cluster (" +
              std::to_string(s.cluster.gpu_count()) + " GPUs)",
          "give a rank below " + std::to_string(s.cluster.gpu_count()));
    }
  }
  if (root.has("reliability")) {
    if (s.serving) root["reliability"].fail("reliability applies to training jobs", "remove the reliability: section");
    s.reliability = reliability::read_reliability(root["reliability"], catalog);
  }
  s.calibration = read_calibration(root["calibration"], s.cluster, catalog, base_dir);
  if (root.has("cost")) s.cost = read_cost(root["cost"]);
  if (s.serving)
    s.serving_config = read_serving(root["serving"], catalog, s.cluster, s.model, s.calibration.kernel, base_dir);
  // Last: the only check whose cost grows with the cluster (read_cluster_description).
  check_cluster_topology(s.cluster, root["cluster"]);
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
