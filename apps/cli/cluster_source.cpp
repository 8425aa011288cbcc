#include "apps/cli/cluster_source.hpp"

#include <filesystem>

#include "hw/error.hpp"
#include "models/calibration/calibration_file.hpp"
#include "workloads/scenario/scenario.hpp"

namespace exasim::cli {

namespace {

namespace fs = std::filesystem;

models::CollectiveParams calibration_of(const config::Node& n, const std::string& dir) {
  models::Calibration cal;
  if (!n.defined()) return cal.collective;
  if (n.is_map()) return models::apply_calibration(cal, n).collective;
  fs::path p = n.as_string();
  if (p.is_relative() && !fs::exists(p)) p = fs::path(dir) / p;
  if (!fs::exists(p)) n.fail("calibration file not found: " + p.string(), "give a path relative to the file or the current folder");
  return models::load_calibration(cal, p.string()).collective;
}

}  // namespace

ClusterSource load_cluster_source(const std::string& ref, int nodes, const hw::Catalog& catalog) {
  ClusterSource out;
  out.name = ref;
  if (fs::exists(ref) && !fs::is_directory(ref)) {
    const config::Node root = config::load_file(ref);
    root.expect_map();
    if (!root.has("cluster")) root.fail("no cluster: section in " + ref, "give a scenario or a cluster file, or a catalog node name");
    out.cluster = workloads::read_cluster(root["cluster"], catalog);
    const std::string dir = fs::path(ref).parent_path().string();
    out.collective = calibration_of(root["calibration"], dir.empty() ? "." : dir);
    if (root.has("calibration")) out.collective_source = ref + " (calibration:)";
    return out;
  }
  if (!catalog.contains(hw::CatalogKind::kNode, ref)) {
    throw ConfigError("'" + ref + "' is neither a file nor a catalog node", {"<command line>", 0, "--cluster"},
                      "give a scenario file or a node from `exasim hw list` (e.g. dgx-a100)");
  }
  const std::string yaml = "{node: " + ref + ", nodes: " + std::to_string(nodes > 0 ? nodes : 1) + "}";
  out.cluster = workloads::read_cluster(config::load_string(yaml, "<command line>"), catalog);
  return out;
}

}  // namespace exasim::cli
