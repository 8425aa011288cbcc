#include "apps/cli/calibrate_collective.hpp"

#include <filesystem>
#include <map>
#include <iostream>

#include "apps/cli/cluster_source.hpp"
#include "apps/cli/table.hpp"
#include "hw/catalog.hpp"
#include "hw/error.hpp"
#include "hw/units.hpp"
#include "models/calibration/aic_deepep_table.hpp"
#include "models/calibration/aic_nccl_table.hpp"
#include "models/calibration/aic_nvlink_all_to_all_table.hpp"
#include "models/calibration/calibration_file.hpp"
#include "sim/net/collective_calibration.hpp"

namespace exasim::cli {

namespace {

namespace fs = std::filesystem;

// The catalog server each kernels-aic folder's GPU was measured in (MANIFEST.tsv names the
// device; the tables time one node).
std::string server_of_folder(const std::string& folder) {
  if (folder == "a100_sxm") return "dgx-a100";
  if (folder == "h100_sxm") return "dgx-h100";
  if (folder == "h200_sxm") return "dgx-h200";
  if (folder == "b200_sxm") return "dgx-b200";
  if (folder == "gb200") return "gb200-nvl72";
  if (folder == "l40s") return "pcie-8gpu-l40s";
  return "";
}

std::string value_text(const models::CollectiveParams& p, const std::string& name) {
  const models::CollectiveParamSlot& s = models::collective_param_slot(name);
  const double v = p.*s.field;
  return s.kind == models::CollectiveParamKind::kTime ? units::format(v, units::Dimension::kTime, 4) : fmt_fixed(v, 3);
}

void print_errors(std::ostream& out, const std::string& title, const topologies::Cluster& node,
                  const models::CollectiveParams& before, const models::CollectiveParams& after,
                  const std::vector<models::CollectiveSample>& samples, const std::string& after_label = "fitted") {
  if (samples.empty()) return;
  out << "\n" << title << " (" << samples.size() << " calls): mean absolute error by message size\n";
  std::vector<std::string> headers = {"group", "model"};
  for (const char* c : sim::kCollectiveSizeClasses) headers.emplace_back(c);
  Table t(headers);
  for (std::size_t c = 2; c < headers.size(); ++c) t.set_align_right(c);
  const auto b = sim::collective_errors(node, before, samples), a = sim::collective_errors(node, after, samples);
  for (std::size_t i = 0; i < a.size(); ++i)
    for (const auto* rows : {&b, &a}) {
      const sim::CollectiveErrorRow& r = (*rows)[i];
      std::vector<std::string> cells = {rows == &b ? r.group : "", rows == &b ? "default" : after_label};
      for (int c = 0; c < 5; ++c) cells.push_back(r.count[c] ? fmt_percent(r.mean_abs_error[c], 1) : "-");
      t.add_row(cells);
    }
  t.print(out);
}

using ExpertSamples = std::vector<models::ExpertAllToAllSample>;

std::map<models::ExpertAllToAllKey, ExpertSamples> by_key(const ExpertSamples& samples) {
  std::map<models::ExpertAllToAllKey, ExpertSamples> out;
  for (const auto& s : samples) out[s.key].push_back(s);
  return out;
}

// Mean absolute error of `costs` on calls of 128 tokens or fewer, on the larger ones, on all ("-"
// where there are none).
struct TokenErrors {
  std::string small, large, all;
};
TokenErrors token_errors(const ExpertSamples& samples, int device_sms, const models::ExpertAllToAllCosts& costs) {
  ExpertSamples small, large;
  for (const auto& s : samples) (s.exchange.tokens <= 128 ? small : large).push_back(s);
  auto err = [&](const ExpertSamples& v) {
    return v.empty() ? std::string("-") : fmt_percent(models::expert_all_to_all_error(v, device_sms, costs), 1);
  };
  return {err(small), err(large), err(samples)};
}

// Fits each expert all-to-all phase present (models/calibration/expert_all_to_all_fit.hpp) into
// `fitted`, prints its constants and errors by token count, and returns the lines for the file.
std::vector<std::pair<std::string, std::string>> fit_expert_all_to_all(int device_sms,
                                                                       const std::vector<models::ExpertAllToAllSample>& samples,
                                                                       double held_out, models::CollectiveParams& fitted,
                                                                       std::ostream& out) {
  std::vector<std::pair<std::string, std::string>> lines;
  if (samples.empty()) return lines;
  if (device_sms <= 0)
    throw ConfigError("the node's GPU states no SM count", {samples.front().source, 0, ""}, "give the GPU's sm_count");
  out << "\nMoE all-to-all kernels (" << samples.size() << " calls): constants and held-out error\n";
  Table t({"phase", "floor", "per expert", "per token", "per copy", "token row", "call row", "copy sender", "link", "fit set",
           "held out", "<=128 tok", ">128 tok"});
  for (std::size_t c = 1; c < 13; ++c) t.set_align_right(c);
  for (const auto& [key, phase] : by_key(samples)) {
    const models::ExpertAllToAllFit f = models::fit_expert_all_to_all(phase, device_sms, held_out, 1);
    fitted.expert_all_to_all[key] = f.costs;
    const TokenErrors held = token_errors(f.held_out, device_sms, f.costs);
    const std::string fit_set = token_errors(f.fit_set, device_sms, f.costs).all;
    auto time = [](double s) { return units::format(s, units::Dimension::kTime, 3); };
    auto rate = [](double b) { return b > 0 ? units::format(b, units::Dimension::kBandwidth, 3) : std::string("-"); };
    const std::string name = models::expert_all_to_all_key_name(key);
    t.add_row({name, time(f.costs.floor_s), time(f.costs.expert_s), time(f.costs.token_s), time(f.costs.copy_s),
               rate(f.costs.token_bandwidth), rate(f.costs.row_bandwidth), rate(f.costs.unit_bandwidth),
               rate(f.costs.link_bandwidth), fit_set, held.all, held.small, held.large});
    lines.emplace_back("held_out_error." + name, "<=128 tokens " + held.small + ", >128 tokens " + held.large + ", all " +
                                                     held.all + " (" + std::to_string(f.held_out.size()) +
                                                     " calls; fit set " + fit_set + ", " +
                                                     std::to_string(f.fit_set.size()) + ")");
  }
  t.print(out);
  out << "(per token, per copy and token row: on each of DeepEP's SMs; call row: one row on the critical path; copy sender: a "
         "DeepEP SM's rate, an NVLink peer's)\n";
  return lines;
}

// `--evaluate FILE`: the tables predicted on a calibration file's collective parameters, nothing
// fitted: how a node's constants carry to another node's measurements (leave one GPU out).
int evaluate_collective_file(const std::string& file, const std::string& node_name, const ClusterSource& src,
                             const std::vector<models::CollectiveSample>& samples,
                             const std::vector<models::ExpertAllToAllSample>& expert_samples, std::ostream& out) {
  if (!fs::exists(file)) throw IoError("calibration file not found", {file, 0, "--evaluate"}, "give a calibration YAML");
  models::Calibration cal;
  cal.collective = src.collective;
  const models::CollectiveParams p = models::load_calibration(cal, file).collective;
  out << "exasim: the tables of " << node_name << " (" << src.cluster.gpu.name << ") predicted on " << file
      << "'s collective parameters, nothing fitted\n";
  print_errors(out, "NCCL and engine all-reduce", src.cluster, src.collective, p, samples, "file");
  if (expert_samples.empty()) return 0;
  out << "\nMoE all-to-all kernels (" << expert_samples.size() << " calls): mean absolute error\n";
  Table t({"phase", "calls", "<=128 tok", ">128 tok", "all"});
  for (std::size_t c = 1; c < 5; ++c) t.set_align_right(c);
  for (const auto& [key, phase] : by_key(expert_samples)) {
    const std::string name = models::expert_all_to_all_key_name(key), calls = std::to_string(phase.size());
    const auto c = p.expert_all_to_all.find(key);
    if (c == p.expert_all_to_all.end()) {
      t.add_row({name, calls, "not in the file", "not in the file", "not in the file"});
      continue;
    }
    const TokenErrors e = token_errors(phase, src.cluster.gpu.sm_count, c->second);
    t.add_row({name, calls, e.small, e.large, e.all});
  }
  t.print(out);
  return 0;
}

}  // namespace

int calibrate_collective_table(const Context& ctx, const CollectiveCalibrateRequest& r, std::ostream& out) {
  std::vector<models::CollectiveSample> samples;
  std::vector<models::ExpertAllToAllSample> expert_samples;
  std::string names;  // the tables' file names
  for (const std::string& table : r.tables) {
    if (fs::absolute(table).parent_path() != fs::absolute(r.tables.front()).parent_path())
      throw ConfigError("tables of two nodes", {table, 0, ""}, "give one kernels-aic folder's tables per run");
    names += (names.empty() ? "" : ", ") + fs::path(table).filename().string();
    if (models::is_aic_deepep_table(table) || models::is_aic_nvlink_all_to_all_table(table)) {
      const auto read = models::is_aic_deepep_table(table) ? models::read_aic_deepep_table(table)
                                                           : models::read_aic_nvlink_all_to_all_table(table);
      expert_samples.insert(expert_samples.end(), read.begin(), read.end());
      continue;
    }
    const auto read = models::is_aic_custom_all_reduce_table(table) ? models::read_aic_custom_all_reduce_table(table)
                                                                    : models::read_aic_nccl_table(table);
    samples.insert(samples.end(), read.begin(), read.end());
  }
  if (samples.empty() && r.evaluate.empty())
    throw ConfigError("no NCCL table among the inputs", {r.tables.front(), 0, ""},
                      "give the folder's nccl_perf.csv with its DeepEP tables (the file carries the node's NCCL fit)");
  const std::string& first = r.tables.front();
  const std::string folder = fs::absolute(first).parent_path().filename().string();
  const std::string node_name = r.node.empty() ? server_of_folder(folder) : r.node;
  if (node_name.empty())
    throw ConfigError("cannot tell which server the table was measured in", {first, 0, ""},
                      "give --node NODE (a catalog node: exasim hw list --kind node)");
  const hw::Catalog catalog = hw::Catalog::load(ctx.configs_dir);
  const ClusterSource src = load_cluster_source(node_name, 1, catalog);
  if (!r.evaluate.empty()) return evaluate_collective_file(r.evaluate, node_name, src, samples, expert_samples, out);
  sim::CollectiveFitOptions o;
  o.held_out_sizes = r.held_out_sizes;
  o.starts = r.starts;
  const sim::CollectiveCalibration c = sim::calibrate_collectives(src.cluster, src.collective, samples, o);
  out << "exasim: " << samples.size() << " collectives read from " << names << "; collective parameters of "
      << node_name << " (" << src.cluster.gpu.name << ", " << src.cluster.intra.name << ") fitted to "
      << c.fit_set.size() << ", " << c.held_out.size() << " at held-out message sizes predicted without refitting\n\n";
  Table params({"parameter", "default", "fitted", ""});
  params.set_align_right(1), params.set_align_right(2);
  for (const std::string& n : c.fitted_names) {
    // A value on the edge of its physical range: the data want it further, so another part of
    // the model is missing or the node is not what the catalog describes.
    const models::CollectiveParamSlot& slot = models::collective_param_slot(n);
    const double v = c.fitted.*slot.field;
    const bool edge = v <= slot.lower * 1.01 || v >= slot.upper * 0.99;
    params.add_row({n, value_text(src.collective, n), value_text(c.fitted, n), edge ? "at its range's edge" : ""});
  }
  params.print(out);
  print_errors(out, "fit set", src.cluster, src.collective, c.fitted, c.fit_set);
  print_errors(out, "held out", src.cluster, src.collective, c.fitted, c.held_out);
  models::CollectiveParams fitted = c.fitted;
  const auto expert_errors = fit_expert_all_to_all(src.cluster.gpu.sm_count, expert_samples, r.held_out_sizes, fitted, out);

  models::CalibrationHeader h;
  h.gpu = src.cluster.gpu.name;
  h.date = r.date;
  h.source = "AIConfigurator (ai-dynamo/aiconfigurator 095f58a, shared/data/kernels-aic/" + folder + "/: " + names +
             "): nccl-tests on one " + node_name + ", calls back to back (GPU time per call, host launch hidden)" +
             (names.find("custom") != std::string::npos ? "; TensorRT-LLM's own all-reduce (bfloat16)" : "") +
             (names.find("deepep") != std::string::npos ? "; DeepEP's intranode dispatch and combine on 8 GPUs" : "") +
             (names.find("trtllm_alltoall") != std::string::npos ? "; TensorRT-LLM's NVLink MoE all-to-all on 2-64 GPUs" : "");
  h.fit.emplace_back("node", node_name);
  h.fit.emplace_back("samples", std::to_string(c.fit_set.size()) + " fitted, " + std::to_string(c.held_out.size()) + " held out");
  h.fit.emplace_back("held_out", "whole message sizes, fraction " + fmt_fixed(r.held_out_sizes, 2) + ", seed 1");
  for (const sim::CollectiveErrorRow& e : sim::collective_errors(src.cluster, c.fitted, c.held_out)) {
    if (e.group.find(' ') != std::string::npos) continue;  // per op and overall only
    std::string text;
    for (int k = 0; k < 5; ++k)
      text += (k ? ", " : "") + std::string(sim::kCollectiveSizeClasses[k]) + " " +
              (e.count[k] ? fmt_percent(e.mean_abs_error[k], 1) : "-");
    h.fit.emplace_back("held_out_error." + e.group, text);
  }
  if (!expert_samples.empty())
    h.fit.emplace_back("held_out_moe_all_to_all", "whole (hidden, topk, experts) shapes (DeepEP, 8 GPUs, fp8 dispatch, bf16 "
                                                  "combine), whole token counts (NVLink all-to-all, hidden 7168, top-8 of "
                                                  "256: DeepSeek-V3's), fraction " + fmt_fixed(r.held_out_sizes, 2) + ", seed 1");
  for (const auto& [key, text] : expert_errors) h.fit.emplace_back(key, text);
  const std::string path = r.output.empty()
                               ? (fs::path(ctx.configs_dir) / "calibration" / (node_name + "-aic-nccl.yaml")).string()
                               : r.output;
  models::write_calibration_file(path, h,
                                 "Collective parameters of one node fitted by `exasim calibrate` "
                                 "(sim/net/collective_calibration.hpp).",
                                 models::collective_calibration_yaml(fitted, c.fitted_names));
  out << "\nwrote " << fs::absolute(path).string() << "\n";
  return 0;
}

}  // namespace exasim::cli
