#include "apps/cli/calibrate_cpu.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>

#include "apps/cli/table.hpp"
#include "hw/catalog.hpp"
#include "hw/error.hpp"
#include "hw/units.hpp"
#include "models/cpu/cpu_calibration.hpp"
#include "models/cpu/cpu_calibration_file.hpp"

namespace exasim::cli {

namespace {

using models::CpuCalibration;
using models::CpuFitRow;
using units::Dimension;

std::string value_text(double v, const std::string& unit) {
  if (unit == "B/s") return units::format(v, Dimension::kBandwidth, 4);
  if (unit == "s") return units::format(v, Dimension::kTime, 4);
  if (unit == "B") return units::format(v, Dimension::kBytes, 4);
  return fmt_fixed(v, 3);
}

std::string rate_text(const CpuFitRow& r, double seconds) {
  if (r.suite == "latency") return units::format(seconds, Dimension::kTime, 3) + "/access";
  if (r.suite == "gemm") return units::format(r.work / seconds, Dimension::kFlopRate, 3);
  return units::format(r.work / seconds, Dimension::kBandwidth, 3);
}

void print_params(const CpuCalibration& c, std::ostream& out) {
  models::CpuParams p = c.params;
  Table t({"parameter", "value"});
  t.set_align_right(1);
  for (const auto& ref : models::named_params(p)) {
    t.add_row({ref.name, ref.optional && *ref.value == 0 ? "not measured" : value_text(*ref.value, ref.unit)});
  }
  t.print(out);
}

void print_rows(const CpuCalibration& c, std::ostream& out) {
  Table t({"suite", "op", "dtype", "threads", "shape", "measured", "predicted", "error", "measured rate", "predicted rate"});
  for (std::size_t col = 3; col < 10; ++col) t.set_align_right(col);
  for (const auto& r : c.rows) {
    if (!r.check) continue;
    t.add_row({r.suite, r.op, r.dtype.empty() ? "-" : r.dtype, std::to_string(r.threads), r.shape,
               units::format(r.measured_s, Dimension::kTime, 3), units::format(r.predicted_s, Dimension::kTime, 3),
               fmt_percent(r.error(), 1), rate_text(r, r.measured_s), rate_text(r, r.predicted_s)});
  }
  t.print(out);
}

void print_summary(const CpuCalibration& c, std::ostream& out) {
  struct Group {
    const char* suite;
    const char* op;
  };
  const Group groups[] = {{"gemm", ""},    {"stream", "triad"}, {"stream", "read"},
                          {"stream", ""},  {"latency", ""},     {"memcpy", ""}};
  Table t({"suite", "threads", "set", "n", "median |error|", "max |error|"});
  for (std::size_t col = 3; col < 6; ++col) t.set_align_right(col);
  for (const auto& g : groups) {
    for (int threads : {1, c.params.all_threads}) {
      for (bool check : {false, true}) {
        const auto s = models::summarize(c.rows, g.suite, check, g.op, threads);
        if (s.count == 0) continue;
        t.add_row({std::string(g.suite) + (*g.op ? " " + std::string(g.op) : ""), std::to_string(threads),
                   check ? "check" : "fit", std::to_string(s.count), fmt_percent(s.median, 1), fmt_percent(s.max, 1)});
      }
      if (c.params.all_threads == 1) break;
    }
  }
  t.print(out);
}

// Check-set errors for the file: what a reader needs to judge the calibration.
std::map<std::string, double> check_errors(const CpuCalibration& c) {
  std::map<std::string, double> m;
  const std::pair<int, const char*> groups[] = {{1, "one_core"}, {c.params.all_threads, "all_cores"}};
  for (const auto& [threads, name] : groups) {
    const auto g = models::summarize(c.rows, "gemm", true, "", threads);
    const auto s = models::summarize(c.rows, "stream", true, "triad", threads);
    const auto r = models::summarize(c.rows, "stream", true, "read", threads);
    if (g.count) m["gemm_" + std::string(name) + "_max_error"] = g.max;
    if (s.count) m["stream_triad_" + std::string(name) + "_max_error"] = s.max;
    if (r.count) m["stream_read_" + std::string(name) + "_max_error"] = r.max;
  }
  return m;
}

std::string default_output(const Context& ctx, const hw::Profile& p) {
  std::string host = p.host_text.count("hostname") ? p.host_text.at("hostname") : "host";
  for (char& ch : host) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-') ch = '-';
  }
  return (std::filesystem::path(ctx.configs_dir) / "calibration" / (host + "-" + p.date.substr(0, 10) + ".yaml")).string();
}

const hw::ProfileDevice& cpu_device(const hw::Profile& p, const std::string& path) {
  for (const auto& d : p.devices) {
    if (d.kind == "cpu") return d;
  }
  throw ConfigError("the profile has no CPU device", {path, 0, "devices"}, "run exasim-bench on the machine to calibrate");
}

hw::CpuSpec spec_for(const Context& ctx, const hw::ProfileDevice& d, const std::string& device) {
  if (device.empty()) return models::cpu_spec_from_profile(d);
  auto origin = std::make_shared<config::Origin>();
  origin->file = "<command line>";
  return hw::Catalog::load(ctx.configs_dir).cpu(config::Node(YAML::Node(device), origin, "--device"));
}

}  // namespace

bool profile_has_cpu(const hw::Profile& profile) {
  for (const auto& m : profile.measurements) {
    for (const auto& d : profile.devices) {
      if (d.index == m.device && d.kind == "cpu" && (m.suite == "stream" || m.suite == "gemm")) return true;
    }
  }
  return false;
}

int calibrate_cpu_profile(const Context& ctx, const hw::Profile& profile, const std::string& profile_path,
                          const std::string& device, const std::string& output, std::ostream& out) {
  const hw::ProfileDevice& d = cpu_device(profile, profile_path);
  const CpuCalibration c = models::calibrate_cpu(profile, d, spec_for(ctx, d, device), profile_path);
  out << "CPU " << d.name << ": " << c.spec.cores << " cores, " << units::format(c.spec.base_clock_hz, Dimension::kFrequency)
      << ", " << c.spec.simd_width_bits << "-bit SIMD x " << c.spec.fma_units_per_core << " FMA"
      << (device.empty() ? " (as the profile reports it)" : " (spec of " + device + ")") << "\n\nFitted parameters\n";
  print_params(c, out);
  out << "\nPredicted vs measured on the check set (not used by the fit; times are minima of repeats)\n";
  print_rows(c, out);
  out << "\nSummary\n";
  print_summary(c, out);
  models::CpuCalibrationInfo info;
  info.device = device.empty() ? d.name : device;
  info.host = profile.host_text.count("hostname") ? profile.host_text.at("hostname") : "";
  info.date = profile.date;
  info.source = profile_path;
  info.check = check_errors(c);
  const std::string path = output.empty() ? default_output(ctx, profile) : output;
  std::ofstream file(path);
  if (!file) throw IoError("cannot write the calibration file", {path, 0, ""}, "check that the folder exists");
  file << models::cpu_calibration_yaml(c, info);
  out << "\nwrote " << path << "\n";
  return 0;
}

}  // namespace exasim::cli
