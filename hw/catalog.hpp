#pragma once
// The hardware and model catalogs in configs/: named YAML entries that scenarios refer to by
// name, extend with {base: NAME, key: value}, or replace with an inline mapping.
#include <map>
#include <string>
#include <vector>

#include "hw/config/node.hpp"
#include "hw/cpu_spec.hpp"
#include "hw/failure_rates_spec.hpp"
#include "hw/fabric_spec.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/link_spec.hpp"
#include "hw/nic_spec.hpp"
#include "hw/node_spec.hpp"
#include "hw/plausible_ranges.hpp"
#include "hw/storage_spec.hpp"

namespace exasim::hw {

enum class CatalogKind { kGpu, kLink, kFabric, kNic, kNode, kCpu, kModel, kStorage, kFailures };
inline constexpr CatalogKind kAllCatalogKinds[] = {CatalogKind::kGpu,     CatalogKind::kLink, CatalogKind::kFabric,
                                                   CatalogKind::kNic,     CatalogKind::kNode, CatalogKind::kCpu,
                                                   CatalogKind::kModel,   CatalogKind::kStorage,
                                                   CatalogKind::kFailures};
std::string_view catalog_kind_name(CatalogKind k);  // "GPU", "link", "fabric", ...

class Catalog {
 public:
  // Reads configs_dir/hw/{gpus,links,fabrics,nics,nodes,cpus,storage,failures,plausible}.yaml and configs_dir/models/*.yaml.
  static Catalog load(const std::string& configs_dir);

  const std::string& configs_dir() const { return dir_; }
  std::vector<std::string> names(CatalogKind kind) const;  // sorted
  bool contains(CatalogKind kind, const std::string& name) const;
  const config::Node& entry(CatalogKind kind, const std::string& name) const;  // throws if unknown

  // A component reference as layers to apply in order: the catalog chain (base first), then the
  // reference's own keys. `ref` is a name, {base: NAME, ...overrides}, or an inline mapping.
  std::vector<config::Node> layers(CatalogKind kind, const config::Node& ref) const;
  // The display name of a reference: the catalog name, "NAME (modified)", or "inline".
  std::string reference_name(const config::Node& ref) const;
  // The catalog entry a name reference_name gave stands on: "H100-SXM5-80GB (modified)" ->
  // "H100-SXM5-80GB" (an inline GPU with `base:`); any other name unchanged.
  static std::string base_name(const std::string& name);

  GpuSpec gpu(const config::Node& ref) const;
  LinkSpec link(const config::Node& ref) const;
  FabricSpec fabric(const config::Node& ref) const;
  NicSpec nic(const config::Node& ref) const;
  NodeSpec node(const config::Node& ref) const;
  CpuSpec cpu(const config::Node& ref) const;
  StorageSpec storage(const config::Node& ref) const;
  FailureRatesSpec failure_rates(const config::Node& ref) const;
  // By plain name (the reference is a synthetic scalar node; errors name `context`).
  GpuSpec gpu(const std::string& name) const;

 private:
  void add_file(CatalogKind kind, const std::string& path);
  void append_chain(CatalogKind kind, const std::string& name, const config::Node& where,
                    std::vector<config::Node>& out, int depth) const;

  template <class Spec>
  Spec checked(CatalogKind kind, const char* range_kind, const config::Node& ref,
               Spec (*build)(const std::string&, const std::vector<config::Node>&)) const;

  std::string dir_;
  std::map<CatalogKind, std::map<std::string, config::Node>> entries_;
  PlausibleRanges plausible_;  // configs/hw/plausible.yaml
};

// The catalog names a mistyped `name` may have meant, as a hint ("did you mean \"A\" or \"B\"? ",
// or "" when none is near): the names it begins (case aside: H100 -> H100-SXM5-80GB and
// H100-PCIe-80GB), else those it is part of, else the one within a few edits; at most four.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& names);

// configs/ of this installation: $EXASIM_HOME/configs if set, else the source tree's configs/.
std::string default_configs_dir();

}  // namespace exasim::hw
