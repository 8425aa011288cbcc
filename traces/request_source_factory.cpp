#include "traces/request_source_factory.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "hw/data_dir.hpp"
#include "traces/azure_trace.hpp"
#include "traces/burstgpt_trace.hpp"
#include "traces/csv_reader.hpp"
#include "traces/length_trace.hpp"
#include "traces/mooncake_trace.hpp"
#include "traces/replay_options.hpp"
#include "workloads/serving/synthetic_source.hpp"

namespace exasim::traces {

namespace {

using workloads::serving::RequestSource;
namespace fs = std::filesystem;

// ---- detection: which columns (or which first character) a format's first line has ----

bool header_has(std::string_view first_line, std::initializer_list<std::string_view> names) {
  std::vector<std::string_view> fields;
  split_csv_line(first_line, fields);
  for (auto n : names)
    if (std::find(fields.begin(), fields.end(), n) == fields.end()) return false;
  return true;
}

bool is_azure(std::string_view l) { return header_has(l, {"TIMESTAMP", "ContextTokens", "GeneratedTokens"}); }
bool is_burstgpt(std::string_view l) {
  return header_has(l, {"Timestamp", "Model", "Request tokens", "Response tokens"});
}
bool is_mooncake(std::string_view l) {
  const auto p = l.find_first_not_of(" \t");
  return p != std::string_view::npos && l[p] == '{';
}
bool is_lengths(std::string_view l) { return header_has(l, {"num_prefill_tokens", "num_decode_tokens"}); }

// ---- format keys and openers ----

std::vector<std::string> no_keys(const config::Node&) { return {}; }
std::vector<std::string> burstgpt_keys(const config::Node&) { return {"failed", "model"}; }
std::vector<std::string> mooncake_keys(const config::Node&) { return {"jitter"}; }
std::vector<std::string> lengths_keys(const config::Node& w) {
  std::vector<std::string> keys = {"arrival"};
  if (w.has("arrival")) {
    const auto& more = workloads::serving::find_arrival_process(w["arrival"]).keys;
    keys.insert(keys.end(), more.begin(), more.end());
  }
  return keys;
}

std::unique_ptr<RequestSource> open_azure(const std::string& path, const config::Node&, std::uint64_t) {
  return std::make_unique<AzureTraceSource>(path);
}

std::unique_ptr<RequestSource> open_burstgpt(const std::string& path, const config::Node& w, std::uint64_t) {
  BurstGptOptions o;
  if (w.has("failed")) o.keep_failed = w["failed"].as_choice({"drop", "keep"}) == "keep";
  if (w.has("model")) o.model = w["model"].as_string();
  return std::make_unique<BurstGptTraceSource>(path, o);
}

std::unique_ptr<RequestSource> open_mooncake(const std::string& path, const config::Node& w, std::uint64_t seed) {
  MooncakeOptions o;
  o.seed = seed;
  if (w.has("jitter")) o.jitter_s = w["jitter"].as_nonnegative_quantity(units::Dimension::kTime);
  return std::make_unique<MooncakeTraceSource>(path, o);
}

std::unique_ptr<RequestSource> open_lengths(const std::string& path, const config::Node& w, std::uint64_t seed) {
  auto arrivals = w.has("arrival") ? workloads::serving::make_arrival_process(w) : workloads::serving::offline_arrivals();
  return std::make_unique<LengthTraceSource>(path, std::move(arrivals), seed);
}

// ---- the workload mapping ----

const TraceFormat& find_format(const config::Node& format) {
  const std::string name = format.as_string();
  std::string list;
  for (const auto& f : trace_formats()) {
    if (f.name == name) return f;
    list += (list.empty() ? "" : " | ") + f.name;
  }
  format.fail("unknown trace format \"" + name + "\"", "choose one of: " + list);
}

// `node` names a file: absolute, or relative to base_dir (the scenario's folder), else to the data
// root (hw/data_dir.hpp). IoError at the node if it is in neither.
std::string resolve(const config::Node& node, const std::string& base_dir) {
  const fs::path written = node.as_string();
  std::error_code ec;
  if (written.is_absolute()) {
    if (fs::is_regular_file(written, ec)) return written.string();
    throw IoError("no file \"" + written.string() + "\"", node.where(), "check the path");
  }
  const fs::path beside = base_dir.empty() ? written : fs::path(base_dir) / written;
  if (fs::is_regular_file(beside, ec)) return beside.string();
  const fs::path data = fs::path(hw::default_data_dir()) / written;
  if (fs::is_regular_file(data, ec)) return data.string();
  throw IoError("no file \"" + written.string() + "\" beside the scenario (" + beside.string() + ") or in the data folder (" +
                    data.string() + ")",
                node.where(), "relative paths are read from the scenario's folder, then from $EXASIM_DATA (default ../shared/data)");
}

ReplayOptions replay_options(const config::Node& w) {
  ReplayOptions o;
  if (w.has("max_requests")) o.max_requests = w["max_requests"].as_positive_int();
  if (w.has("time_scale")) {
    const config::Node s = w["time_scale"];
    o.time_scale = s.as_number();
    if (!(o.time_scale > 0)) s.fail("must be positive, got " + s.as_string(), "2 replays the trace twice as fast");
  }
  if (w.has("window")) {
    const config::Node win = w["window"];
    if (!win.is_sequence() || win.size() != 2) win.fail("expected [start, end]", "e.g. window: [10 min, 20 min]");
    o.window_start_s = win.at(0).as_nonnegative_quantity(units::Dimension::kTime);
    o.window_end_s = win.at(1).as_nonnegative_quantity(units::Dimension::kTime);
    if (!(o.window_end_s > o.window_start_s)) win.at(1).fail("the window must end after it starts");
  }
  return o;
}

std::unique_ptr<RequestSource> make_trace_source(const config::Node& w, std::uint64_t seed, const std::string& base_dir) {
  const config::Node trace = w["trace"];
  const std::string path = resolve(trace, base_dir);
  const TraceFormat* format = w.has("format") ? &find_format(w["format"]) : detect_trace_format(path);
  if (format == nullptr) {
    std::string list;
    for (const auto& f : trace_formats()) list += (list.empty() ? "" : " | ") + f.name;
    trace.fail("cannot tell the format of \"" + path + "\" from its first line", "add format: " + list);
  }
  std::vector<std::string> allowed = {"trace", "format", "max_requests", "time_scale", "window"};
  const auto extra = format->keys(w);
  allowed.insert(allowed.end(), extra.begin(), extra.end());
  w.check_keys(allowed);
  const ReplayOptions options = replay_options(w);
  return std::make_unique<ReplaySource>(format->open(path, w, seed), options, trace.where());
}

// Length tables by resolved path: one table per file, so that prompt and output lengths from the
// same file share it (and are drawn jointly).
workloads::serving::LengthTableLoader table_loader(const std::string& base_dir) {
  auto cache = std::make_shared<std::map<std::string, std::shared_ptr<const workloads::serving::LengthTable>>>();
  return [cache, base_dir](const config::Node& file) {
    const std::string path = resolve(file, base_dir);
    auto& slot = (*cache)[fs::weakly_canonical(path).string()];
    if (!slot) slot = load_length_table(path);
    return slot;
  };
}

}  // namespace

const std::vector<TraceFormat>& trace_formats() {
  static const std::vector<TraceFormat> table = {
      {"azure", "Azure LLM inference trace: TIMESTAMP,ContextTokens,GeneratedTokens (2023 or 2024 timestamps)",
       no_keys, is_azure, open_azure},
      {"azure-2024", "the Azure 2024 week-long traces: mixed sub-second precision, +00:00 offset (same reader as azure)",
       no_keys, is_azure, open_azure},
      {"burstgpt",
       "BurstGPT: Timestamp,Model,Request tokens,Response tokens,...; failed: drop|keep (Response tokens = 0, "
       "default drop); model: NAME keeps one model",
       burstgpt_keys, is_burstgpt, open_burstgpt},
      {"mooncake",
       "Mooncake JSONL: timestamp (ms), input_length, output_length, hash_ids (512-token prefix blocks); "
       "jitter: 3 s spreads each bucket of equal timestamps uniformly over that width",
       mooncake_keys, is_mooncake, open_mooncake},
      {"lengths",
       "length statistics CSV: num_prefill_tokens,num_decode_tokens rows in order; arrival: PROCESS (+ its keys) "
       "gives the times, default offline",
       lengths_keys, is_lengths, open_lengths},
  };
  return table;
}

const TraceFormat* detect_trace_format(const std::string& path) {
  LineReader lines(path);
  std::string_view first;
  if (!lines.next(first)) return nullptr;
  for (const auto& f : trace_formats())
    if (f.detect(first)) return &f;
  return nullptr;
}

std::unique_ptr<RequestSource> make_request_source(const config::Node& workload, std::uint64_t seed,
                                                   const std::string& base_dir) {
  workload.expect_map();
  if (workload.has("trace")) return make_trace_source(workload, seed, base_dir);
  if (workload.has("arrival")) return workloads::serving::make_synthetic_source(workload, seed, table_loader(base_dir));
  workload.fail("the workload needs either `trace:` (replay a file) or `arrival:` (synthetic requests)",
                "e.g. {trace: conv.csv} or {arrival: poisson, rate_per_s: 8, requests: 2000, prompt_tokens: 1000, "
                "output_tokens: 200}");
}

std::string workload_help() {
  std::string out = "trace formats (serving.workload.format):\n";
  for (const auto& f : trace_formats()) out += "  " + f.name + ": " + f.help + "\n";
  out += "arrival processes (serving.workload.arrival):\n";
  for (const auto& a : workloads::serving::arrival_processes()) out += "  " + a.name + ": " + a.help + "\n";
  out += "length distributions (prompt_tokens / output_tokens: {dist: NAME, ...}):\n";
  for (const auto& l : workloads::serving::length_distributions()) out += "  " + l.name + ": " + l.help + "\n";
  return out;
}

}  // namespace exasim::traces
