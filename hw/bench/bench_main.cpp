// exasim-bench: native microbenchmarks of this machine (CPU always, CUDA GPUs where built and
// present), written as one profile JSON for `exasim calibrate`.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <ctime>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hw/bench/host_info.hpp"
#include "hw/bench/suite.hpp"
#include "hw/config/node.hpp"
#include "hw/error.hpp"
#include "hw/profile/profile.hpp"

namespace {

using exasim::bench::Suite;

std::vector<Suite> all_suites() {
  std::vector<Suite> s = exasim::bench::cpu_suites();
  for (auto& g : exasim::bench::gpu_suites()) s.push_back(std::move(g));
  return s;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void print_list(const std::vector<Suite>& suites) {
  std::cout << "suites (--suite NAME[,NAME...]; default: all):\n";
  for (const auto& s : suites) std::cout << "  " << s.name << " (" << s.device_kind << ")  " << s.description << "\n";
  std::cout << "this build " << (exasim::bench::gpu_suites().empty() ? "has no CUDA suites" : "has the CUDA suites") << "\n";
}

// The suite names asked for, each checked against the table; empty request = all.
std::set<std::string> selected(const std::string& request, const std::vector<Suite>& suites) {
  std::set<std::string> known, out;
  for (const auto& s : suites) known.insert(s.name);
  if (request.empty()) return known;
  std::stringstream in(request);
  for (std::string name; std::getline(in, name, ',');) {
    if (name.empty()) continue;
    if (!known.count(name)) {
      const std::string near = exasim::config::closest(name, {known.begin(), known.end()});
      throw exasim::ConfigError("unknown suite \"" + name + "\"", {"<command line>", 0, "--suite"},
                                (near.empty() ? "" : "did you mean \"" + near + "\"? ") + std::string("--list names them"));
    }
    out.insert(name);
  }
  return out;
}

int run(const exasim::bench::Options& opt, const std::string& request, const std::string& output) {
  const std::vector<Suite> suites = all_suites();
  const std::set<std::string> chosen = selected(request, suites);
  exasim::hw::Profile profile;
  profile.tool = std::string("exasim-bench ") + EXASIM_VERSION;
  profile.date = utc_now();
  exasim::bench::describe_host(profile, opt);
  exasim::bench::add_gpu_devices(profile, std::cout);
  exasim::bench::Recorder rec{opt, profile, std::cout};
  const std::vector<exasim::hw::ProfileDevice> devices = profile.devices;
  for (const auto& s : suites) {
    if (!chosen.count(s.name)) continue;
    for (const auto& d : devices) {
      if (d.kind == s.device_kind) s.run(rec, d);
    }
  }
  profile.host["load_average_end"] = exasim::bench::load_average();
  const double load = std::max(profile.host["load_average_start"], profile.host["load_average_end"]);
  if (load > 0.5 * profile.host["threads"]) {
    std::ostringstream note;
    note << "the machine was busy (load average " << load << " on " << profile.host["threads"]
         << " CPUs): other processes may have inflated the all-cores timings";
    profile.notes.push_back(note.str());
    std::cout << "exasim-bench: note: " << note.str() << "\n";
  }
  exasim::hw::write_profile(profile, output);
  std::cout << "exasim-bench: " << profile.measurements.size() << " measurements written to " << output << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"exasim-bench: microbenchmarks of this machine's CPU (and CUDA GPUs) for `exasim calibrate`"};
  app.set_version_flag("--version", std::string("exasim-bench ") + EXASIM_VERSION);
  exasim::bench::Options opt;
  bool list = false;
  std::string request, output = "exasim-profile.json";
  app.add_flag("--list", list, "name the suites of this build and exit");
  app.add_option("--suite", request, "comma-separated suites to run (default: all)");
  app.add_flag("--quick", opt.quick, "fewer sizes and repeats (the CPU suites take well under a minute)");
  app.add_option("--threads", opt.threads, "threads for the all-cores runs (default: every online CPU)")
      ->check(CLI::PositiveNumber);
  app.add_option("-o,--output", output, "profile JSON to write")->capture_default_str();
  try {
    app.parse(argc, argv);
    if (list) {
      print_list(all_suites());
      return 0;
    }
    return run(opt, request, output);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "exasim-bench: error: <command line>: " << e.what() << " (run with --help for usage)\n";
    return 2;
  } catch (const exasim::Error& e) {
    std::cerr << "exasim-bench: error: " << e.describe() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "exasim-bench: error: internal: " << e.what() << "\n";
    return 4;
  }
}
