#include "hw/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace exasim::hw {

namespace fs = std::filesystem;
using config::Node;

std::string_view catalog_kind_name(CatalogKind k) {
  switch (k) {
    case CatalogKind::kGpu: return "GPU";
    case CatalogKind::kLink: return "link";
    case CatalogKind::kFabric: return "node fabric";
    case CatalogKind::kNic: return "NIC";
    case CatalogKind::kNode: return "node";
    case CatalogKind::kCpu: return "CPU";
    case CatalogKind::kModel: return "model";
    case CatalogKind::kStorage: return "storage system";
    case CatalogKind::kFailures: return "failure-rate set";
  }
  return "?";
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& names) {
  const auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  const std::string key = lower(name);
  std::vector<std::string> near;
  for (const std::string& n : names)
    if (!key.empty() && lower(n).starts_with(key)) near.push_back(n);
  if (near.empty())
    for (const std::string& n : names)
      if (key.size() >= 3 && lower(n).find(key) != std::string::npos) near.push_back(n);
  if (near.empty()) {
    const std::string c = config::closest(name, names);
    if (!c.empty()) near.push_back(c);
  }
  if (near.empty()) return "";
  if (near.size() > 4) near.resize(4);
  std::string hint = "did you mean ";
  for (std::size_t i = 0; i < near.size(); ++i)
    hint += (i == 0 ? "" : i + 1 == near.size() ? " or " : ", ") + ("\"" + near[i] + "\"");
  return hint + "? ";
}

std::string default_configs_dir() {
  if (const char* home = std::getenv("EXASIM_HOME"); home && *home) return std::string(home) + "/configs";
  return std::string(EXASIM_SOURCE_DIR) + "/configs";
}

Catalog Catalog::load(const std::string& configs_dir) {
  Catalog c;
  c.dir_ = configs_dir;
  if (!fs::is_directory(configs_dir)) {
    throw IoError("catalog folder not found", {configs_dir, 0, ""}, "set EXASIM_HOME to the exasim source folder");
  }
  const std::pair<CatalogKind, const char*> files[] = {
      {CatalogKind::kGpu, "hw/gpus.yaml"},   {CatalogKind::kLink, "hw/links.yaml"}, {CatalogKind::kFabric, "hw/fabrics.yaml"},
      {CatalogKind::kNic, "hw/nics.yaml"},   {CatalogKind::kNode, "hw/nodes.yaml"}, {CatalogKind::kCpu, "hw/cpus.yaml"},
      {CatalogKind::kStorage, "hw/storage.yaml"}, {CatalogKind::kFailures, "hw/failures.yaml"}};
  for (const auto& [kind, rel] : files) {
    const fs::path p = fs::path(configs_dir) / rel;
    if (fs::exists(p)) c.add_file(kind, p.string());
  }
  c.plausible_ = PlausibleRanges::load((fs::path(configs_dir) / "hw/plausible.yaml").string());
  const fs::path models = fs::path(configs_dir) / "models";
  if (fs::is_directory(models)) {
    std::vector<fs::path> paths;
    for (const auto& e : fs::directory_iterator(models))
      if (e.path().extension() == ".yaml") paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());  // deterministic: duplicates resolve the same way every run
    for (const auto& p : paths) c.add_file(CatalogKind::kModel, p.string());
  }
  return c;
}

void Catalog::add_file(CatalogKind kind, const std::string& path) {
  const Node root = config::load_file(path);
  if (!root.defined()) return;
  root.expect_map();
  auto& table = entries_[kind];
  for (const std::string& name : root.keys()) {
    const Node e = root[name];
    e.expect_map();
    if (table.contains(name)) e.fail(std::string(catalog_kind_name(kind)) + " \"" + name + "\" is defined twice");
    table.emplace(name, e);
  }
}

std::vector<std::string> Catalog::names(CatalogKind kind) const {
  std::vector<std::string> out;
  if (auto it = entries_.find(kind); it != entries_.end())
    for (const auto& [name, _] : it->second) out.push_back(name);
  return out;
}

bool Catalog::contains(CatalogKind kind, const std::string& name) const {
  auto it = entries_.find(kind);
  return it != entries_.end() && it->second.contains(name);
}

const Node& Catalog::entry(CatalogKind kind, const std::string& name) const {
  return entries_.at(kind).at(name);
}

void Catalog::append_chain(CatalogKind kind, const std::string& name, const Node& where, std::vector<Node>& out,
                           int depth) const {
  if (!contains(kind, name)) {
    where.fail("unknown " + std::string(catalog_kind_name(kind)) + " \"" + name + "\"",
               did_you_mean(name, names(kind)) + "`exasim hw list` shows the catalog");
  }
  if (depth > 8) where.fail("catalog entries derive from each other in a loop (base: " + name + ")");
  const Node& e = entry(kind, name);
  if (e.has("base")) append_chain(kind, e["base"].as_string(), e["base"], out, depth + 1);
  out.push_back(e);
}

std::vector<Node> Catalog::layers(CatalogKind kind, const Node& ref) const {
  std::vector<Node> out;
  if (!ref.defined()) ref.fail("missing " + std::string(catalog_kind_name(kind)), "give a catalog name or a mapping");
  if (ref.is_scalar()) {
    append_chain(kind, ref.as_string(), ref, out, 0);
    return out;
  }
  ref.expect_map();
  if (ref.has("base")) append_chain(kind, ref["base"].as_string(), ref["base"], out, 0);
  out.push_back(ref);
  return out;
}

namespace {
constexpr std::string_view kModified = " (modified)";  // reference_name's mark of an inline `base:`
}  // namespace

std::string Catalog::base_name(const std::string& name) {
  return name.ends_with(kModified) ? name.substr(0, name.size() - kModified.size()) : name;
}

std::string Catalog::reference_name(const Node& ref) const {
  if (ref.is_scalar()) return ref.as_string();
  if (ref.has("base")) return ref["base"].as_string() + std::string(kModified);
  if (ref.has("name")) return ref["name"].as_string();
  return "inline";
}

// Checks a reference's values against what real parts have, then builds its spec (whose own
// checks, e.g. a measured rate above the peak, would otherwise speak first of a missing unit).
template <class Spec>
Spec Catalog::checked(CatalogKind kind, const char* range_kind, const Node& ref,
                      Spec (*build)(const std::string&, const std::vector<Node>&)) const {
  const std::vector<Node> l = layers(kind, ref);
  plausible_.check(range_kind, catalog_kind_name(kind), l);
  return build(reference_name(ref), l);
}

GpuSpec Catalog::gpu(const Node& ref) const { return checked(CatalogKind::kGpu, "gpu", ref, gpu_from_layers); }
LinkSpec Catalog::link(const Node& ref) const { return checked(CatalogKind::kLink, "link", ref, link_from_layers); }
FabricSpec Catalog::fabric(const Node& ref) const { return checked(CatalogKind::kFabric, "fabric", ref, fabric_from_layers); }
NicSpec Catalog::nic(const Node& ref) const { return checked(CatalogKind::kNic, "nic", ref, nic_from_layers); }
StorageSpec Catalog::storage(const Node& ref) const { return checked(CatalogKind::kStorage, "storage", ref, storage_from_layers); }
FailureRatesSpec Catalog::failure_rates(const Node& ref) const {
  return failure_rates_from_layers(reference_name(ref), layers(CatalogKind::kFailures, ref));
}
NodeSpec Catalog::node(const Node& ref) const { return node_from_layers(reference_name(ref), layers(CatalogKind::kNode, ref)); }
CpuSpec Catalog::cpu(const Node& ref) const { return cpu_from_layers(reference_name(ref), layers(CatalogKind::kCpu, ref)); }

GpuSpec Catalog::gpu(const std::string& name) const {
  return gpu(config::load_string(name, "<name>"));
}

}  // namespace exasim::hw
