#include "models/calibration/calibration_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "hw/error.hpp"
#include "hw/units.hpp"

namespace exasim::models {

namespace {

using config::Node;
using units::Dimension;

double value_of(const NamedParam& p, const Node& n) {
  switch (p.kind) {
    case ParamKind::kFraction: return n.as_efficiency();
    case ParamKind::kSwitch: return n.as_bool() ? 1.0 : 0.0;
    case ParamKind::kTime: return n.as_nonnegative_quantity(Dimension::kTime);
    case ParamKind::kBytes: return n.as_positive_quantity(Dimension::kBytes);
    case ParamKind::kBandwidth: return n.as_positive_quantity(Dimension::kBandwidth);
    case ParamKind::kCount: {
      const double v = n.as_number();
      if (!(v >= 0) || v != std::floor(v)) n.fail("a count must be a whole number >= 0, got " + n.as_string());
      return v;
    }
    case ParamKind::kFactor: {
      const double v = n.as_number();
      if (!(v >= 1)) n.fail("a factor must be at least 1, got " + n.as_string());
      return v;
    }
  }
  return 0;
}

void apply_kernel(KernelParams& k, const Node& n) {
  std::vector<NamedParam> params = named_params(k);
  std::map<std::string, const NamedParam*> by_name;
  std::set<std::string> groups;  // "memory_op_efficiency" for "memory_op_efficiency.rmsnorm"
  for (const NamedParam& p : params) {
    by_name[p.name] = &p;
    if (auto dot = p.name.find('.'); dot != std::string::npos) groups.insert(p.name.substr(0, dot));
  }
  std::vector<std::string> allowed;
  for (const NamedParam& p : params)
    if (p.name.find('.') == std::string::npos) allowed.push_back(p.name);
  for (const std::string& g : groups)  // groups with no default of their own (cast_overhead)
    if (!by_name.contains(g)) allowed.push_back(g);
  n.check_keys(allowed);
  // A file that fits the 16-bit matrix efficiency only keeps the family's fp8 shortfall relative to it.
  const double fp8_ratio = k.matrix_efficiency_fp8 > 0 ? k.matrix_efficiency_fp8 / k.matrix_efficiency : 0;
  for (const std::string& key : n.keys()) {
    const Node v = n[key];
    if (groups.contains(key) && v.is_map()) {
      std::vector<std::string> ops;
      if (by_name.contains(key)) ops.emplace_back("default");
      for (const auto& [name, p] : by_name)
        if (name.starts_with(key + ".")) ops.push_back(name.substr(key.size() + 1));
      v.check_keys(ops);
      for (const std::string& op : v.keys()) {
        const NamedParam& p = *by_name.at(op == "default" ? key : key + "." + op);
        *p.value = value_of(p, v[op]);
      }
      continue;
    }
    if (!by_name.contains(key)) {
      std::string kinds;
      for (const auto& [name, p] : by_name)
        if (name.starts_with(key + ".")) kinds += (kinds.empty() ? "" : ", ") + name.substr(key.size() + 1);
      v.fail("\"" + key + "\" holds one value per kind, not one number", "write it as a mapping of " + kinds);
    }
    const NamedParam& p = *by_name.at(key);
    *p.value = value_of(p, v);
  }
  if (n.has("matrix_efficiency") && !n.has("matrix_efficiency_fp8")) k.matrix_efficiency_fp8 = fp8_ratio * k.matrix_efficiency;
}

std::string number_text(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string value_text(const NamedParam& p) {
  switch (p.kind) {
    case ParamKind::kTime: return number_text(*p.value * 1e6) + " us";
    case ParamKind::kBytes: return number_text(*p.value) + " B";
    case ParamKind::kBandwidth: return number_text(*p.value / 1e9) + " GB/s";
    case ParamKind::kSwitch: return *p.value > 0 ? "true" : "false";
    default: return number_text(*p.value);
  }
}

}  // namespace

Calibration apply_calibration(Calibration base, const Node& node) {
  node.check_keys({"gpu", "date", "source", "kernel", "collective", "training", "fit", "cpu"});  // cpu: models/cpu/cpu_calibration_file.hpp
  if (node.has("kernel")) {
    apply_kernel(base.kernel, node["kernel"]);
    base.kernel.source = "calibration: " + node.file();
  }
  if (node.has("collective")) {
    apply_collective_params(base.collective, node["collective"]);
    base.collective.source = "calibration: " + node.file();
  }
  if (node.has("training")) {
    const Node t = node["training"];
    t.expect_map();
    t.check_keys({"micro_batch_overhead", "iteration_overhead", "expert_dispatch_overhead", "sharded_collective_efficiency"});
    if (t.has("micro_batch_overhead")) base.host.micro_batch_s = t["micro_batch_overhead"].as_nonnegative_quantity(units::Dimension::kTime);
    if (t.has("iteration_overhead")) base.host.iteration_s = t["iteration_overhead"].as_nonnegative_quantity(units::Dimension::kTime);
    if (t.has("expert_dispatch_overhead"))
      base.host.expert_dispatch_s = t["expert_dispatch_overhead"].as_nonnegative_quantity(units::Dimension::kTime);
    if (t.has("sharded_collective_efficiency")) {
      const double e = t["sharded_collective_efficiency"].as_number();
      if (!(e > 0 && e <= 1))
        t["sharded_collective_efficiency"].fail("the sharded collective efficiency must be in (0, 1]",
                                                "a fraction of the network model's collective rate; 1 = NCCL over every rail");
      base.host.sharded_collective_efficiency = e;
    }
  }
  return base;
}

Calibration load_calibration(Calibration base, const std::string& path) {
  return apply_calibration(std::move(base), config::load_file(path));
}

std::string kernel_calibration_yaml(const KernelParams& params, const std::vector<std::string>& names) {
  KernelParams p = params;
  std::string out = "kernel:\n";
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> groups;
  std::vector<std::string> group_order;
  for (const NamedParam& np : named_params(p)) {
    if (std::find(names.begin(), names.end(), np.name) == names.end()) continue;
    const auto dot = np.name.find('.');
    const std::string group = dot == std::string::npos ? np.name : np.name.substr(0, dot);
    const std::string member = dot == std::string::npos ? "default" : np.name.substr(dot + 1);
    if (!groups.contains(group)) group_order.push_back(group);
    groups[group].emplace_back(member, value_text(np));
  }
  for (const std::string& g : group_order) {
    const auto& members = groups[g];
    if (members.size() == 1 && members[0].first == "default") {
      out += "  " + g + ": " + members[0].second + "\n";
      continue;
    }
    out += "  " + g + ":\n";
    for (const auto& [member, text] : members) out += "    " + member + ": " + text + "\n";
  }
  return out;
}

KernelParams kernel_params_as_written(const KernelParams& base, const KernelParams& fitted,
                                      const std::vector<std::string>& names) {
  Calibration c;
  c.kernel = base;
  KernelParams back =
      apply_calibration(c, config::load_string(kernel_calibration_yaml(fitted, names), "<fitted parameters>")).kernel;
  back.source = fitted.source;
  return back;
}

std::string collective_calibration_yaml(const CollectiveParams& p, const std::vector<std::string>& names) {
  std::string out = "collective:\n";
  for (const CollectiveParamSlot& slot : collective_param_slots()) {
    if (std::find(names.begin(), names.end(), slot.name) == names.end()) continue;
    const double v = p.*slot.field;
    out += "  " + std::string(slot.name) + ": " +
           (slot.kind == CollectiveParamKind::kTime ? number_text(v * 1e6) + " us" : number_text(v)) + "\n";
  }
  for (const auto& [key, c] : p.expert_all_to_all)  // the fitted phases
    out += "  " + expert_all_to_all_key_name(key) + ": {floor: " + number_text(c.floor_s * 1e6) +
           " us, expert_cost: " + number_text(c.expert_s * 1e9) + " ns, token_time: " + number_text(c.token_s * 1e9) +
           " ns, copy_time: " + number_text(c.copy_s * 1e9) + " ns, token_bandwidth: " + number_text(c.token_bandwidth / 1e9) +
           " GB/s, row_bandwidth: " + number_text(c.row_bandwidth / 1e9) + " GB/s, unit_bandwidth: " + number_text(c.unit_bandwidth / 1e9) + " GB/s, link_bandwidth: " +
           number_text(c.link_bandwidth / 1e9) + " GB/s}\n";
  return out;
}

void write_calibration_file(const std::string& path, const CalibrationHeader& h, const std::string& comment,
                            const std::string& sections) {
  std::ofstream out(path);
  if (!out) throw IoError("cannot write calibration file", {path, 0, ""}, "check that the folder exists and is writable");
  auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  };
  out << "# " << comment << "\n";
  out << "gpu: " << h.gpu << "\n";
  out << "date: " << h.date << "\n";
  out << "source: " << quoted(h.source) << "\n";
  out << sections;
  if (!h.fit.empty()) {
    out << "fit:\n";
    for (const auto& [k, v] : h.fit) out << "  " << k << ": " << quoted(v) << "\n";
  }
}

void write_calibration(const std::string& path, const CalibrationHeader& h, const KernelParams& p,
                       const std::vector<std::string>& names) {
  write_calibration_file(path, h, "Kernel-model parameters fitted by `exasim calibrate` (models/calibration/kernel_fit.hpp).",
                         kernel_calibration_yaml(p, names));
}

}  // namespace exasim::models
