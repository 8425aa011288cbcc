// `exasim hw list` and `exasim hw show NAME`: the hardware and model catalogs as tables or JSON.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/cli/commands.hpp"
#include "hw/config/json_text.hpp"
#include "apps/cli/table.hpp"
#include "hw/catalog.hpp"
#include "hw/units.hpp"

namespace exasim::cli {

namespace {

using hw::Catalog;
using hw::CatalogKind;
using nlohmann::json;
using units::Dimension;

// One line of `hw show`: a readable value for the table and the SI value for JSON. `pointer` is a
// JSON pointer ("/peak_flop_per_s/bf16") so that related values nest; its last part names the unit.
struct Field {
  std::string pointer;
  std::string label;
  std::string text;
  json value;
};

Field quantity(std::string pointer, std::string label, double v, Dimension d) {
  return {std::move(pointer), std::move(label), units::format(v, d), v};
}
Field count(std::string pointer, std::string label, long long n) {
  return {std::move(pointer), std::move(label), std::to_string(n), n};
}
Field text(std::string pointer, std::string label, const std::string& s) {
  return {std::move(pointer), std::move(label), s.empty() ? "-" : s, s.empty() ? json(nullptr) : json(s)};
}
Field flag(std::string pointer, std::string label, bool b) {
  return {std::move(pointer), std::move(label), b ? "yes" : "no", b};
}

// Catalog names typed on the command line; errors while resolving them name the argument.
config::Node name_ref(const std::string& name) {
  auto origin = std::make_shared<config::Origin>();
  origin->file = "<command line>";
  return config::Node(YAML::Node(name), origin, "NAME");
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }
std::string times(int n, const std::string& what) {
  return what.empty() ? "-" : std::to_string(n) + " x " + what;
}

// A YAML value read straight from a catalog entry (models are parsed in a later layer).
json yaml_to_json(const YAML::Node& n) {
  if (n.IsSequence()) {
    json a = json::array();
    for (const auto& e : n) a.push_back(yaml_to_json(e));
    return a;
  }
  if (n.IsMap()) {
    json o = json::object();
    for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return o;
  }
  if (!n.IsScalar()) return nullptr;
  const std::string& s = n.Scalar();
  if (s == "true" || s == "false") return s == "true";
  if (auto v = units::parse(s, Dimension::kNone)) {
    if (*v == static_cast<double>(static_cast<long long>(*v)) && s.find_first_of(".eE") == std::string::npos)
      return static_cast<long long>(*v);
    return *v;
  }
  return s;
}

// A key as one part of a JSON pointer (RFC 6901: "~" and "/" are escaped).
std::string pointer_escape(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// "experts 8, top_k 2" for a nested mapping; the scalar itself otherwise.
std::string yaml_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  std::string out;
  if (n.IsMap()) {
    for (const auto& kv : n)
      out += (out.empty() ? "" : ", ") + kv.first.as<std::string>() + " " + yaml_text(kv.second);
  } else if (n.IsSequence()) {
    for (const auto& e : n) out += (out.empty() ? "" : ", ") + yaml_text(e);
    out = "[" + out + "]";
  }
  return out;
}

// ---- hw show: every field of one entry ------------------------------------------------------

std::vector<Field> gpu_fields(const Catalog& cat, const std::string& name) {
  const hw::GpuSpec g = cat.gpu(name_ref(name));
  std::vector<Field> f = {
      text("/vendor", "vendor", g.vendor),
      text("/architecture", "architecture", g.architecture),
      count("/sm_count", g.vendor == "amd" ? "compute units" : "SMs", g.sm_count),
      quantity("/boost_clock_hz", "boost clock", g.boost_clock_hz, Dimension::kFrequency),
  };
  for (DType t : kAllDTypes) {
    if (!g.supports(t)) continue;
    const std::string dt(dtype_name(t));
    f.push_back(quantity("/peak_flop_per_s/" + dt, "peak " + dt + " (dense)", g.peak(t), Dimension::kFlopRate));
  }
  for (DType t : kAllDTypes) {
    if (g.measured_matmul(t) <= 0) continue;
    const std::string dt(dtype_name(t));
    f.push_back(quantity("/measured_matmul_flop_per_s/" + dt, "measured matmul " + dt + " (MAMF)", g.measured_matmul(t),
                         Dimension::kFlopRate));
  }
  f.push_back(quantity("/vector_fp32_flop_per_s", "vector fp32", g.vector_fp32_flops, Dimension::kFlopRate));
  f.push_back(quantity("/hbm_capacity_bytes", "HBM capacity", g.hbm_capacity_bytes, Dimension::kBytes));
  f.push_back(quantity("/hbm_bandwidth_bytes_per_s", "HBM bandwidth", g.hbm_bandwidth, Dimension::kBandwidth));
  f.push_back(quantity("/l2_bytes", "L2 cache", g.l2_bytes, Dimension::kBytes));
  f.push_back(quantity("/smem_per_sm_bytes", "shared memory per SM", g.smem_per_sm_bytes, Dimension::kBytes));
  f.push_back(quantity("/tdp_w", "TDP", g.tdp_w, Dimension::kPower));
  f.push_back(quantity("/idle_power_w", "idle power", g.idle_power_w, Dimension::kPower));
  f.push_back(quantity("/scaleup_bandwidth_bytes_per_s", "scale-up bandwidth per direction", g.scaleup_bandwidth,
                       Dimension::kBandwidth));
  f.push_back(text("/pcie", "PCIe link", g.pcie));
  f.push_back(text("/node_fabric", "node fabric", g.node_fabric));
  return f;
}

std::vector<Field> link_fields(const Catalog& cat, const std::string& name) {
  const hw::LinkSpec l = cat.link(name_ref(name));
  return {text("/kind", "kind", l.kind),
          quantity("/bandwidth_bytes_per_s", "bandwidth per direction", l.bandwidth, Dimension::kBandwidth),
          quantity("/latency_s", "latency", l.latency, Dimension::kTime)};
}

std::vector<Field> fabric_fields(const Catalog& cat, const std::string& name) {
  const hw::FabricSpec s = cat.fabric(name_ref(name));
  return {text("/kind", "kind", s.kind),
          text("/link", "link", s.link),
          quantity("/bandwidth_bytes_per_s", "bandwidth per GPU per direction", s.bandwidth, Dimension::kBandwidth),
          quantity("/latency_s", "latency", s.latency, Dimension::kTime),
          count("/max_gpus", "GPUs per domain", s.max_gpus),
          flag("/in_switch_reduction", "in-switch reduction", s.in_switch_reduction)};
}

std::vector<Field> nic_fields(const Catalog& cat, const std::string& name) {
  const hw::NicSpec s = cat.nic(name_ref(name));
  return {text("/kind", "kind", s.kind),
          quantity("/bandwidth_bytes_per_s", "bandwidth per direction", s.bandwidth, Dimension::kBandwidth),
          quantity("/latency_s", "latency", s.latency, Dimension::kTime),
          quantity("/switch_latency_s", "latency per extra switch", s.switch_latency, Dimension::kTime)};
}

std::vector<Field> node_fields(const Catalog& cat, const std::string& name) {
  const hw::NodeSpec s = cat.node(name_ref(name));
  return {text("/gpu", "GPU", s.gpu),
          count("/gpus_per_node", "GPUs per node", s.gpus_per_node),
          text("/fabric", "fabric", s.fabric),
          text("/nic", "NIC", s.nic),
          count("/nics_per_node", "NICs per node", s.nics_per_node),
          text("/cpu", "CPU", s.cpu),
          count("/cpus_per_node", "CPUs per node", s.cpus_per_node),
          quantity("/host_memory_bytes", "host memory", s.host_memory_bytes, Dimension::kBytes),
          text("/pcie", "PCIe link", s.pcie),
          quantity("/power_other_w", "power besides GPUs", s.power_other_w, Dimension::kPower)};
}

// A value the catalog may leave out (0): "not stated" rather than a zero with a unit.
Field stated(const std::string& pointer, const std::string& label, double value, Dimension dim) {
  return value > 0 ? quantity(pointer, label, value, dim) : Field{pointer, label, "not stated", nullptr};
}

std::vector<Field> cpu_fields(const Catalog& cat, const std::string& name) {
  const hw::CpuSpec s = cat.cpu(name_ref(name));
  return {text("/vendor", "vendor", s.vendor),
          count("/cores", "cores", s.cores),
          quantity("/base_clock_hz", "base clock", s.base_clock_hz, Dimension::kFrequency),
          quantity("/boost_clock_hz", "boost clock", s.boost_clock_hz, Dimension::kFrequency),
          count("/simd_width_bits", "SIMD width (bits)", s.simd_width_bits),
          count("/fma_units_per_core", "FMA units per core", s.fma_units_per_core),
          quantity("/peak_fp32_flop_per_s", "peak fp32 (base clock)", s.peak_fp32_flops(), Dimension::kFlopRate),
          quantity("/memory_bandwidth_bytes_per_s", "memory bandwidth", s.memory_bandwidth, Dimension::kBandwidth),
          count("/memory_channels", "memory channels", s.memory_channels),
          quantity("/l3_bytes", "L3 cache", s.l3_bytes, Dimension::kBytes),
          quantity("/tdp_w", "TDP", s.tdp_w, Dimension::kPower),
          stated("/idle_power_w", "idle power", s.idle_power_w, Dimension::kPower),
          stated("/memory_capacity_bytes", "memory capacity", s.memory_capacity, Dimension::kBytes)};
}

// Models are shown as written: their spec is built in the workloads layer, above hw.
std::vector<Field> model_fields(const Catalog& cat, const std::string& name) {
  const YAML::Node& y = cat.entry(CatalogKind::kModel, name).yaml();
  std::vector<Field> f;
  for (const auto& kv : y) {
    const std::string key = kv.first.as<std::string>();
    f.push_back({"/" + pointer_escape(key), key, yaml_text(kv.second), yaml_to_json(kv.second)});
  }
  return f;
}

// ---- hw list: one table per kind with the key figures ----------------------------------------

Table list_gpus(const Catalog& cat) {
  Table t({"name", "vendor", "arch", "SMs", "16-bit dense", "HBM", "HBM bandwidth", "TDP", "node fabric"});
  for (std::size_t c = 3; c <= 7; ++c) t.set_align_right(c);
  for (const auto& name : cat.names(CatalogKind::kGpu)) {
    const hw::GpuSpec g = cat.gpu(name_ref(name));
    t.add_row({name, g.vendor, g.architecture, std::to_string(g.sm_count),
               // bf16, or fp16 on GPUs without bf16 (V100)
               g.supports(DType::kBf16)   ? units::format(g.peak(DType::kBf16), Dimension::kFlopRate)
               : g.supports(DType::kFp16) ? units::format(g.peak(DType::kFp16), Dimension::kFlopRate) + " fp16"
                                          : "-",
               units::format(g.hbm_capacity_bytes, Dimension::kBytes),
               units::format(g.hbm_bandwidth, Dimension::kBandwidth), units::format(g.tdp_w, Dimension::kPower),
               or_dash(g.node_fabric)});
  }
  return t;
}

Table list_links(const Catalog& cat) {
  Table t({"name", "kind", "bandwidth/dir", "latency"});
  t.set_align_right(2);
  t.set_align_right(3);
  for (const auto& name : cat.names(CatalogKind::kLink)) {
    const hw::LinkSpec l = cat.link(name_ref(name));
    t.add_row({name, l.kind, units::format(l.bandwidth, Dimension::kBandwidth),
               units::format(l.latency, Dimension::kTime)});
  }
  return t;
}

Table list_fabrics(const Catalog& cat) {
  Table t({"name", "kind", "link", "bandwidth/dir", "latency", "max GPUs", "in-switch reduction"});
  for (std::size_t c = 3; c <= 5; ++c) t.set_align_right(c);
  for (const auto& name : cat.names(CatalogKind::kFabric)) {
    const hw::FabricSpec s = cat.fabric(name_ref(name));
    t.add_row({name, s.kind, or_dash(s.link), units::format(s.bandwidth, Dimension::kBandwidth),
               units::format(s.latency, Dimension::kTime), s.max_gpus > 0 ? std::to_string(s.max_gpus) : "-",
               s.in_switch_reduction ? "yes" : "no"});
  }
  return t;
}

Table list_nics(const Catalog& cat) {
  Table t({"name", "kind", "bandwidth/dir", "latency"});
  t.set_align_right(2);
  t.set_align_right(3);
  for (const auto& name : cat.names(CatalogKind::kNic)) {
    const hw::NicSpec s = cat.nic(name_ref(name));
    t.add_row({name, s.kind, units::format(s.bandwidth, Dimension::kBandwidth),
               units::format(s.latency, Dimension::kTime)});
  }
  return t;
}

Table list_nodes(const Catalog& cat) {
  Table t({"name", "GPU", "GPUs/node", "fabric", "NICs", "CPUs"});
  t.set_align_right(2);
  for (const auto& name : cat.names(CatalogKind::kNode)) {
    const hw::NodeSpec s = cat.node(name_ref(name));
    t.add_row({name, s.gpu, std::to_string(s.gpus_per_node), s.fabric, times(s.nics_per_node, s.nic),
               times(s.cpus_per_node, s.cpu)});
  }
  return t;
}

std::vector<Field> storage_fields(const Catalog& cat, const std::string& name) {
  const hw::StorageSpec s = cat.storage(name_ref(name));
  return {text("/kind", "kind", s.kind),
          quantity("/write_bandwidth_bytes_per_s", "write bandwidth (system)", s.write_bandwidth, Dimension::kBandwidth),
          quantity("/read_bandwidth_bytes_per_s", "read bandwidth (system)", s.read_bandwidth, Dimension::kBandwidth),
          quantity("/node_bandwidth_bytes_per_s", "bandwidth per node", s.node_bandwidth, Dimension::kBandwidth)};
}

Table list_storage(const Catalog& cat) {
  Table t({"name", "kind", "write", "read", "per node"});
  for (std::size_t c = 2; c <= 4; ++c) t.set_align_right(c);
  for (const auto& name : cat.names(CatalogKind::kStorage)) {
    const hw::StorageSpec s = cat.storage(name_ref(name));
    t.add_row({name, s.kind, units::format(s.write_bandwidth, Dimension::kBandwidth),
               units::format(s.read_bandwidth, Dimension::kBandwidth), units::format(s.node_bandwidth, Dimension::kBandwidth)});
  }
  return t;
}

// A failure rate (interruptions per device-hour) with `digits` significant digits: "9.231e-06".
std::string rate_text(double per_hour, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, per_hour);
  return buf;
}

Field rate(std::string pointer, std::string label, double per_hour) {
  return {std::move(pointer), std::move(label), rate_text(per_hour, 4), per_hour};
}

std::vector<Field> failure_fields(const Catalog& cat, const std::string& name) {
  const hw::FailureRatesSpec s = cat.failure_rates(name_ref(name));
  return {rate("/per_gpu_hour/gpu", "GPU, per GPU-hour", s.gpu),
          rate("/per_gpu_hour/hbm", "HBM, per GPU-hour", s.hbm),
          rate("/per_gpu_hour/software", "software, per GPU-hour", s.software),
          rate("/per_node_hour/nvlink", "NVLink / NVSwitch, per node-hour", s.nvlink),
          rate("/per_node_hour/host", "host, per node-hour", s.host),
          rate("/per_nic_hour/nic", "NIC, per NIC-hour", s.nic),
          rate("/per_nic_hour/network", "switches and cables, per NIC-hour", s.network),
          text("/source", "source", s.source)};
}

Table list_failures(const Catalog& cat) {
  Table t({"name", "per GPU-hour", "per node-hour", "per NIC-hour", "source"});
  for (const auto& name : cat.names(CatalogKind::kFailures)) {
    const hw::FailureRatesSpec s = cat.failure_rates(name_ref(name));
    t.add_row({name, rate_text(s.gpu + s.hbm + s.software, 3), rate_text(s.nvlink + s.host, 3), rate_text(s.nic + s.network, 3),
               or_dash(s.source)});
  }
  return t;
}

Table list_cpus(const Catalog& cat) {
  Table t({"name", "vendor", "cores", "base clock", "memory bandwidth"});
  for (std::size_t c = 2; c <= 4; ++c) t.set_align_right(c);
  for (const auto& name : cat.names(CatalogKind::kCpu)) {
    const hw::CpuSpec s = cat.cpu(name_ref(name));
    t.add_row({name, or_dash(s.vendor), std::to_string(s.cores), units::format(s.base_clock_hz, Dimension::kFrequency),
               units::format(s.memory_bandwidth, Dimension::kBandwidth)});
  }
  return t;
}

// Read straight from the YAML (the model spec lives in workloads/), an entry's own keys over its
// base's; absent keys print "-".
Table list_models(const Catalog& cat) {
  const char* keys[] = {"layers", "hidden", "heads", "kv_heads", "ffn", "vocab"};
  Table t({"name", "layers", "hidden", "heads", "kv heads", "ffn", "vocab", "experts (top-k)"});
  for (std::size_t c = 1; c <= 7; ++c) t.set_align_right(c);
  for (const auto& name : cat.names(CatalogKind::kModel)) {
    const std::vector<config::Node> chain = cat.layers(CatalogKind::kModel, name_ref(name));  // base first
    auto find = [&](const char* key) -> std::optional<config::Node> {
      for (auto it = chain.rbegin(); it != chain.rend(); ++it)
        if (it->has(key)) return (*it)[key];
      return std::nullopt;
    };
    std::vector<std::string> row = {name};
    for (const char* k : keys) row.push_back(find(k) ? find(k)->as_string() : "-");
    const config::Node moe = find("moe").value_or(config::Node{});
    row.push_back(moe.has("experts") && moe.has("top_k")
                      ? moe["experts"].as_string() + " (" + moe["top_k"].as_string() + ")"
                      : "-");
    t.add_row(std::move(row));
  }
  return t;
}

// ---- the kinds, by their --kind name ---------------------------------------------------------

struct KindEntry {
  std::string_view option;   // --kind value
  std::string_view heading;  // title above its table
  CatalogKind kind;
  Table (*list)(const Catalog&);
  std::vector<Field> (*fields)(const Catalog&, const std::string&);
};

constexpr KindEntry kKinds[] = {
    {"gpu", "GPUs", CatalogKind::kGpu, list_gpus, gpu_fields},
    {"link", "Links", CatalogKind::kLink, list_links, link_fields},
    {"fabric", "Node fabrics", CatalogKind::kFabric, list_fabrics, fabric_fields},
    {"nic", "NICs", CatalogKind::kNic, list_nics, nic_fields},
    {"node", "Nodes", CatalogKind::kNode, list_nodes, node_fields},
    {"cpu", "CPUs", CatalogKind::kCpu, list_cpus, cpu_fields},
    {"model", "Models", CatalogKind::kModel, list_models, model_fields},
    {"storage", "Storage systems", CatalogKind::kStorage, list_storage, storage_fields},
    {"failures", "Failure rates (unexpected interruptions per device-hour)", CatalogKind::kFailures, list_failures,
     failure_fields},
};

std::vector<std::string> kind_options() {
  std::vector<std::string> out;
  for (const auto& k : kKinds) out.emplace_back(k.option);
  out.emplace_back("all");
  return out;
}

bool selected(const KindEntry& k, const std::string& kind_option) {
  return kind_option == "all" || kind_option == k.option;
}

struct Options {
  std::string kind = "all";
  std::string name;
  bool json = false;
};

int run_list(const Context& ctx, const Options& opt) {
  const Catalog cat = Catalog::load(ctx.configs_dir);
  bool first = true;
  for (const auto& k : kKinds) {
    if (!selected(k, opt.kind)) continue;
    if (!first) std::cout << "\n";
    first = false;
    std::cout << k.heading << "\n";
    const Table t = k.list(cat);
    if (t.empty()) std::cout << "  (none in " << cat.configs_dir() << ")\n";
    else t.print(std::cout);
  }
  return 0;
}

// The kinds whose catalog holds opt.name; none is an error with the closest name as a hint.
std::vector<const KindEntry*> find_matches(const Catalog& cat, const Options& opt) {
  std::vector<const KindEntry*> found;
  std::vector<std::string> candidates;
  for (const auto& k : kKinds) {
    if (!selected(k, opt.kind)) continue;
    if (cat.contains(k.kind, opt.name)) found.push_back(&k);
    for (auto& n : cat.names(k.kind)) candidates.push_back(std::move(n));
  }
  if (!found.empty()) return found;
  for (const auto& k : kKinds) {  // in another catalog than --kind asked for
    if (cat.contains(k.kind, opt.name)) {
      throw ConfigError("\"" + opt.name + "\" is not a " + opt.kind, {"<command line>", 0, "NAME"},
                        "it is a " + std::string(k.option) + ": use --kind " + std::string(k.option));
    }
  }
  throw ConfigError("unknown hardware name \"" + opt.name + "\"", {"<command line>", 0, "NAME"},
                    hw::did_you_mean(opt.name, candidates) + "`exasim hw list` shows the catalog");
}

std::string kind_list(const std::vector<const KindEntry*>& kinds, std::string_view sep) {
  std::string out;
  for (const auto* k : kinds) out += (out.empty() ? "" : std::string(sep)) + std::string(k->option);
  return out;
}

void print_json(const Options& opt, const KindEntry& k, const std::vector<Field>& fields) {
  // "catalog", not "kind": links, fabrics and NICs have a field named kind of their own.
  json j = {{"name", opt.name}, {"catalog", std::string(k.option)}};
  for (const auto& f : fields) j[json::json_pointer(f.pointer)] = f.value;
  std::cout << config::to_json_text(j, 2) << "\n";
}

void print_text(const Catalog& cat, const Options& opt, const KindEntry& k, const std::vector<Field>& fields) {
  const SourceLocation at = cat.entry(k.kind, opt.name).where();
  std::cout << hw::catalog_kind_name(k.kind) << " " << opt.name << "  (" << at.file << ":" << at.line << ")\n";
  Table t({"field", "value"});
  for (const auto& f : fields) t.add_row({f.label, f.text});
  t.print(std::cout);
}

int run_show(const Context& ctx, const Options& opt) {
  const Catalog cat = Catalog::load(ctx.configs_dir);
  const std::vector<const KindEntry*> found = find_matches(cat, opt);
  // JSON is one object per call, so a name shared by two kinds (a link and the fabric built
  // from it, say) has to be disambiguated; the text output simply shows both.
  if (opt.json && found.size() > 1) {
    throw ConfigError("\"" + opt.name + "\" names more than one kind of entry: " + kind_list(found, ", "),
                      {"<command line>", 0, "NAME"}, "add --kind " + kind_list(found, " or --kind "));
  }
  bool first = true;
  for (const auto* k : found) {
    const std::vector<Field> fields = k->fields(cat, opt.name);
    if (opt.json) {
      print_json(opt, *k, fields);
      continue;
    }
    if (!first) std::cout << "\n";
    first = false;
    print_text(cat, opt, *k, fields);
  }
  return 0;
}

}  // namespace

void add_hw_command(CLI::App& app, Context& ctx) {
  CLI::App* hw_cmd = app.add_subcommand("hw", "the hardware and model catalog (configs/hw, configs/models)");
  hw_cmd->require_subcommand(1);
  auto opt = std::make_shared<Options>();

  CLI::App* list = hw_cmd->add_subcommand("list", "tables of catalog entries with their key figures");
  list->add_option("--kind", opt->kind, "which catalog to list")->check(CLI::IsMember(kind_options()));
  list->callback([&ctx, opt] { ctx.handler = [&ctx, opt] { return run_list(ctx, *opt); }; });

  CLI::App* show = hw_cmd->add_subcommand("show", "every field of one catalog entry, with units");
  show->add_option("NAME", opt->name, "catalog name, e.g. A100-SXM4-80GB")->required();
  show->add_option("--kind", opt->kind, "look only in this catalog")->check(CLI::IsMember(kind_options()));
  show->add_flag("--json", opt->json, "print a JSON object of SI values instead of a table");
  show->callback([&ctx, opt] { ctx.handler = [&ctx, opt] { return run_show(ctx, *opt); }; });
}

}  // namespace exasim::cli
