#include "models/cpu/cpu_calibration_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

#include "hw/units.hpp"

namespace exasim::models {

namespace {

using units::Dimension;

Dimension dimension_of(const std::string& unit) {
  if (unit == "B/s") return Dimension::kBandwidth;
  if (unit == "s") return Dimension::kTime;
  if (unit == "B") return Dimension::kBytes;
  return Dimension::kNone;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5g", v);
  return buf;
}

std::string value_text(double v, const std::string& unit) {
  const Dimension d = dimension_of(unit);
  return d == Dimension::kNone ? number(v) : units::format(v, d, 5);
}

std::vector<std::string> split_dots(const std::string& name) {
  std::vector<std::string> parts;
  std::stringstream in(name);
  for (std::string p; std::getline(in, p, '.');) parts.push_back(p);
  return parts;
}

// Sets node[a][b][c] = value for the dotted name "a.b.c", creating the maps on the way.
void set_path(YAML::Node node, const std::vector<std::string>& parts, std::size_t i, const std::string& value) {
  if (i + 1 == parts.size()) {
    node[parts[i]] = value;
    return;
  }
  if (!node[parts[i]]) node[parts[i]] = YAML::Node(YAML::NodeType::Map);
  set_path(node[parts[i]], parts, i + 1, value);
}

YAML::Node spec_yaml(const hw::CpuSpec& s) {
  YAML::Node n;
  n["cores"] = s.cores;
  n["base_clock"] = units::format(s.base_clock_hz, Dimension::kFrequency, 5);
  n["simd_width_bits"] = s.simd_width_bits;
  n["fma_units_per_core"] = s.fma_units_per_core;
  if (s.memory_bandwidth > 0) n["memory_bandwidth"] = units::format(s.memory_bandwidth, Dimension::kBandwidth, 5);
  if (s.l3_bytes > 0) n["l3_size"] = units::format(s.l3_bytes, Dimension::kBytes, 5);
  return n;
}

hw::CpuSpec read_spec(const config::Node& n, const std::string& name) {
  n.check_keys({"cores", "base_clock", "simd_width_bits", "fma_units_per_core", "memory_bandwidth", "l3_size"});
  hw::CpuSpec s;
  s.name = name;
  s.vendor = "measured";
  s.cores = n.required("cores").as_positive_count();
  s.base_clock_hz = n.required("base_clock").as_positive_quantity(Dimension::kFrequency);
  s.simd_width_bits = n.required("simd_width_bits").as_positive_count();
  s.fma_units_per_core = n.required("fma_units_per_core").as_positive_count();
  if (n.has("memory_bandwidth")) s.memory_bandwidth = n["memory_bandwidth"].as_positive_quantity(Dimension::kBandwidth);
  if (n.has("l3_size")) s.l3_bytes = n["l3_size"].as_positive_quantity(Dimension::kBytes);
  return s;
}

// The node at a dotted path. Recursion, not `n = n[...]`: assigning a yaml-cpp node overwrites
// the node it refers to instead of rebinding the handle.
config::Node leaf(const config::Node& n, const std::vector<std::string>& parts, std::size_t i) {
  return i == parts.size() ? n : leaf(n.required(parts[i]), parts, i + 1);
}

// Whether the dotted path exists (each step a map that has the next key).
bool has_path(const config::Node& n, const std::vector<std::string>& parts, std::size_t i) {
  return i == parts.size() || (n.is_map() && n.has(parts[i]) && has_path(n[parts[i]], parts, i + 1));
}

// Every key a section may hold, from the parameter names: "memory" -> {one_core, all_cores, ...}.
void check_tree(const config::Node& n, const std::string& prefix, const std::vector<std::string>& names) {
  std::vector<std::string> keys;
  for (const auto& name : names) {
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::string key = rest.substr(0, rest.find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  n.check_keys(keys);
  for (const auto& k : n.keys()) {
    if (n[k].is_map() && !(prefix.empty() && (k == "spec" || k == "check"))) check_tree(n[k], prefix + k + ".", names);
  }
}

}  // namespace

std::string cpu_calibration_yaml(const CpuCalibration& c, const CpuCalibrationInfo& info) {
  CpuParams p = c.params;
  YAML::Node cpu;
  cpu["device"] = info.device;
  cpu["host"] = info.host;
  cpu["date"] = info.date;
  cpu["source"] = info.source;
  cpu["spec"] = spec_yaml(c.spec);
  cpu["all_threads"] = p.all_threads;
  cpu["matrix_vector_parallel"] = p.matrix_vector_parallel;
  for (const auto& ref : named_params(p)) {
    if (ref.optional && *ref.value == 0) continue;  // not measured
    set_path(cpu, split_dots(ref.name), 0, value_text(*ref.value, ref.unit));
  }
  for (const auto& [key, v] : info.check) cpu["check"][key] = number(v);
  YAML::Node root;
  root["cpu"] = cpu;
  YAML::Emitter out;
  out << root;
  return "# CPU calibration by `exasim calibrate` from an exasim-bench profile (models/cpu/).\n"
         "# GEMM efficiencies are fractions of the SIMD FMA peak of `spec` at its base clock.\n" +
         std::string(out.c_str()) + "\n";
}

LoadedCpuCalibration read_cpu_calibration(const config::Node& cpu) {
  LoadedCpuCalibration out;
  CpuParams& p = out.params;
  std::vector<CpuParamRef> refs = named_params(p);
  std::vector<std::string> names = {"device", "host", "date", "source", "spec", "all_threads",
                                    "matrix_vector_parallel", "check"};
  for (const auto& r : refs) names.push_back(r.name);
  check_tree(cpu, "", names);
  out.info.device = cpu.required("device").as_string();
  if (cpu.has("host")) out.info.host = cpu["host"].as_string();
  if (cpu.has("date")) out.info.date = cpu["date"].as_string();
  if (cpu.has("source")) out.info.source = cpu["source"].as_string();
  out.spec = read_spec(cpu.required("spec"), out.info.device);
  p.all_threads = cpu.required("all_threads").as_positive_count();
  if (cpu.has("matrix_vector_parallel")) p.matrix_vector_parallel = cpu["matrix_vector_parallel"].as_bool();
  for (const auto& r : refs) {
    if (r.optional && !has_path(cpu, split_dots(r.name), 0)) continue;
    const config::Node n = leaf(cpu, split_dots(r.name), 0);
    const Dimension d = dimension_of(r.unit);
    *r.value = d == Dimension::kNone ? n.as_number() : n.as_nonnegative_quantity(d);
  }
  if (cpu.has("check")) {
    for (const auto& k : cpu["check"].keys()) out.info.check[k] = cpu["check"][k].as_number();
  }
  p.source = "calibration: " + cpu.file();
  return out;
}

LoadedCpuCalibration load_cpu_calibration(const std::string& path) {
  const config::Node root = config::load_file(path);
  return read_cpu_calibration(root.required("cpu"));
}

}  // namespace exasim::models
