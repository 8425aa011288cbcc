#include "hw/profile/profile.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "hw/config/json_text.hpp"
#include "hw/error.hpp"

namespace exasim::hw {

namespace {

using nlohmann::json;

// A JSON value with the file it came from and its path in the document ("measurements[3].time_s"),
// so every complaint names both.
struct At {
  const json& j;
  const std::string& file;
  std::string path;

  [[noreturn]] void fail(const std::string& what, const std::string& hint = {}) const {
    throw ConfigError(what, {file, 0, path.empty() ? "<document>" : path},
                      hint.empty() ? "regenerate the profile with exasim-bench -o FILE" : hint);
  }
  At child(const std::string& key) const {
    if (!j.contains(key)) fail_missing(key);
    return {j.at(key), file, path.empty() ? key : path + "." + key};
  }
  At element(std::size_t i) const { return {j.at(i), file, path + "[" + std::to_string(i) + "]"}; }
  bool has(const std::string& key) const { return j.contains(key) && !j.at(key).is_null(); }

  [[noreturn]] void fail_missing(const std::string& key) const {
    const std::string full = path.empty() ? key : path + "." + key;
    throw ConfigError("missing required field", {file, 0, full}, "exasim-bench writes it; was the file edited or cut short?");
  }
  static std::string type_of(const json& v) { return v.type_name(); }

  const json& object() const {
    if (!j.is_object()) fail(std::string("expected an object, got ") + j.type_name());
    return j;
  }
  const json& array() const {
    if (!j.is_array()) fail(std::string("expected an array, got ") + j.type_name());
    return j;
  }
  std::string text() const {
    if (!j.is_string()) fail(std::string("expected a string, got ") + j.type_name());
    return j.get<std::string>();
  }
  double number() const {
    if (!j.is_number()) fail(std::string("expected a number, got ") + j.type_name());
    const double v = j.get<double>();
    if (!std::isfinite(v)) fail("expected a finite number");
    return v;
  }
  double nonnegative() const {
    const double v = number();
    if (v < 0) fail("expected a number >= 0, got " + j.dump());
    return v;
  }
  double positive() const {
    const double v = number();
    if (!(v > 0)) fail("expected a number > 0, got " + j.dump());
    return v;
  }
  int integer(int lowest) const {
    if (!j.is_number_integer()) fail(std::string("expected an integer, got ") + j.dump());
    const long long v = j.get<long long>();
    if (v < lowest || v > 1'000'000'000) fail("expected an integer >= " + std::to_string(lowest) + ", got " + j.dump());
    return static_cast<int>(v);
  }
};

std::map<std::string, double> number_map(const At& a) {
  std::map<std::string, double> out;
  for (const auto& [key, value] : a.object().items()) out[key] = a.child(key).number();
  return out;
}

void read_host(const At& a, Profile& p) {
  for (const auto& [key, value] : a.object().items()) {
    if (value.is_string()) p.host_text[key] = value.get<std::string>();
    else p.host[key] = a.child(key).nonnegative();
  }
}

ProfileDevice read_device(const At& a) {
  a.object();
  ProfileDevice d;
  d.index = a.child("index").integer(0);
  d.kind = a.child("kind").text();
  if (d.kind != "cpu" && d.kind != "gpu") a.child("kind").fail("expected \"cpu\" or \"gpu\", got \"" + d.kind + "\"");
  d.name = a.child("name").text();
  d.compute_units = a.child("compute_units").positive();
  if (a.has("clock_hz")) d.clock_hz = a.child("clock_hz").nonnegative();
  if (a.has("memory_bytes")) d.memory_bytes = a.child("memory_bytes").nonnegative();
  if (a.has("l2_bytes")) d.l2_bytes = a.child("l2_bytes").nonnegative();
  if (a.has("extra")) d.extra = number_map(a.child("extra"));
  return d;
}

TimeStats read_times(const At& a) {
  a.object();
  TimeStats t{a.child("min").positive(), a.child("median").positive(), a.child("max").positive()};
  if (!(t.min <= t.median && t.median <= t.max)) a.fail("expected min <= median <= max");
  return t;
}

Measurement read_measurement(const At& a, const std::vector<ProfileDevice>& devices) {
  a.object();
  Measurement m;
  m.suite = a.child("suite").text();
  m.op = a.child("op").text();
  m.device = a.child("device").integer(0);
  const bool known = std::any_of(devices.begin(), devices.end(), [&](const ProfileDevice& d) { return d.index == m.device; });
  if (!known) a.child("device").fail("no device with index " + std::to_string(m.device) + " in \"devices\"");
  if (a.has("dtype")) m.dtype = a.child("dtype").text();
  if (a.has("shape")) m.shape = number_map(a.child("shape"));
  if (a.has("threads")) m.threads = a.child("threads").integer(0);
  if (a.has("working_set_bytes")) m.working_set_bytes = a.child("working_set_bytes").nonnegative();
  if (a.has("flops")) m.flops = a.child("flops").nonnegative();
  if (a.has("bytes")) m.bytes = a.child("bytes").nonnegative();
  m.repeats = a.child("repeats").integer(1);
  m.time_s = read_times(a.child("time_s"));
  if (a.has("library")) m.library = number_map(a.child("library"));
  return m;
}

Profile from_json(const json& root, const std::string& file) {
  const At a{root, file, ""};
  a.object();
  Profile p;
  p.schema_version = a.child("schema_version").integer(1);
  if (p.schema_version != 1) {
    a.child("schema_version").fail("unsupported schema version " + std::to_string(p.schema_version),
                                   "this exasim reads version 1; use the exasim-bench of the same release");
  }
  p.tool = a.child("tool").text();
  p.date = a.child("date").text();
  read_host(a.child("host"), p);
  const At devs = a.child("devices");
  for (std::size_t i = 0; i < devs.array().size(); ++i) p.devices.push_back(read_device(devs.element(i)));
  const At ms = a.child("measurements");
  for (std::size_t i = 0; i < ms.array().size(); ++i) p.measurements.push_back(read_measurement(ms.element(i), p.devices));
  if (a.has("notes")) {
    const At notes = a.child("notes");
    for (std::size_t i = 0; i < notes.array().size(); ++i) p.notes.push_back(notes.element(i).text());
  }
  return p;
}

json device_json(const ProfileDevice& d) {
  json j = {{"index", d.index},         {"kind", d.kind},         {"name", d.name},
            {"compute_units", d.compute_units}, {"clock_hz", d.clock_hz}, {"memory_bytes", d.memory_bytes},
            {"l2_bytes", d.l2_bytes}};
  if (!d.extra.empty()) j["extra"] = d.extra;
  return j;
}

json measurement_json(const Measurement& m) {
  json j = {{"suite", m.suite},
          {"op", m.op},
          {"device", m.device},
          {"dtype", m.dtype},
          {"shape", m.shape},
          {"threads", m.threads},
          {"working_set_bytes", m.working_set_bytes},
          {"flops", m.flops},
          {"bytes", m.bytes},
          {"repeats", m.repeats},
          {"time_s", {{"min", m.time_s.min}, {"median", m.time_s.median}, {"max", m.time_s.max}}}};
  if (!m.library.empty()) j["library"] = m.library;
  return j;
}

}  // namespace

Profile parse_profile(const std::string& text, const std::string& name) {
  const json root = config::parse_json_text(text, name, 1, "the file may be cut short; rerun exasim-bench -o FILE");
  return from_json(root, name);
}

Profile read_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot open profile", {path, 0, ""}, "check the path; exasim-bench -o FILE writes one");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_profile(buf.str(), path);
}

std::string profile_to_json(const Profile& p) {
  json host = json::object();
  for (const auto& [k, v] : p.host_text) host[k] = v;
  for (const auto& [k, v] : p.host) host[k] = v;
  json root = {{"schema_version", p.schema_version}, {"tool", p.tool}, {"date", p.date}, {"host", host}};
  root["devices"] = json::array();
  for (const auto& d : p.devices) root["devices"].push_back(device_json(d));
  root["measurements"] = json::array();
  for (const auto& m : p.measurements) root["measurements"].push_back(measurement_json(m));
  if (!p.notes.empty()) root["notes"] = p.notes;
  return config::to_json_text(root, 1) + "\n";
}

void write_profile(const Profile& p, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw IoError("cannot write profile", {path, 0, ""}, "check that the folder exists and is writable");
  out << profile_to_json(p);
  if (!out) throw IoError("writing the profile failed", {path, 0, ""}, "is the disk full?");
}

}  // namespace exasim::hw
