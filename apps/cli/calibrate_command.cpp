// `exasim calibrate INPUT... [--format NAME] [--device NAME] [--fit SOURCES] [-o CALIB.yaml]`: fits
// model parameters to measurements and writes a calibration file. The input's format picks the
// reader from a table (`--format` names one; otherwise the first that recognizes the file is used):
//   vidur-ops  Vidur operator tables (<gpu>_<model>_ops.csv): the GPU kernel models
//   profile    exasim-bench profile (JSON): CPU models (calibrate_cpu.cpp) and GPU kernel models
//   aic-gemm   AIConfigurator GEMM tables (kernels-aic/<gpu>/gemm_perf.csv): the GEMM model, kernel
//              times; whole (n, k) shapes held out (--held-out-shapes)
//              with the same GPU's attention tables (context_/generation_attention_perf.csv) the
//              attention models on top (aic-attention)
//   aic-moe    AIConfigurator MoE tables (kernels-aic/<gpu>/moe_perf.csv): the fused MoE op predicted
//              from the kernel models (moe_experts_model.hpp) on a calibration file; fits nothing
//   aic-nccl   AIConfigurator NCCL tables (kernels-aic/<gpu>/nccl_perf.csv): the node fabric's
//              collective parameters (calibrate_collective.cpp); whole message sizes held out
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "apps/cli/calibrate_collective.hpp"
#include "apps/cli/calibrate_cpu.hpp"
#include "apps/cli/calibrate_moe.hpp"
#include "apps/cli/commands.hpp"
#include "apps/cli/table.hpp"
#include "hw/catalog.hpp"
#include "hw/error.hpp"
#include "hw/profile/profile.hpp"
#include "hw/units.hpp"
#include "models/calibration/aic_attention_table.hpp"
#include "models/calibration/aic_gemm_table.hpp"
#include "models/calibration/aic_moe_table.hpp"
#include "models/calibration/aic_deepep_table.hpp"
#include "models/calibration/aic_nccl_table.hpp"
#include "models/calibration/aic_nvlink_all_to_all_table.hpp"
#include "models/calibration/calibration_file.hpp"
#include "models/calibration/default_calibration.hpp"
#include "models/calibration/kernel_calibration.hpp"
#include "models/calibration/leave_one_gpu_out.hpp"
#include "models/calibration/vidur_op_table.hpp"
#include "models/calibration/tile_agreement.hpp"
#include "models/kernel/gemm_model.hpp"

namespace exasim::cli {

namespace {

namespace fs = std::filesystem;

struct CalibrateOptions {
  std::vector<std::string> inputs;
  std::string input;   // the first input (single-file formats)
  std::string format = "auto";
  std::string device;  // catalog name of the measured device (its spec is the basis of the fit)
  std::string output;  // calibration file; empty: configs/calibration/<device>.yaml (CPU: <host>-<date>)
  std::vector<std::string> fit_sources;  // fit on these sources only; predict the others
  std::string date;    // written into the file; default: today (UTC)
  int starts = 64;     // Latin-hypercube starting points of the fit
  std::string residuals;  // CSV of every sample's measured and predicted time (empty: none)
  double held_out_shapes = -1;  // fraction of (n, k) shapes held out; < 0: the format's default
  bool leave_one_gpu_out = false;   // aic-gemm: fit on all tables but one, predict that one
  bool library_behaviours = false;  // aic-gemm: the kernel-library switches on (KernelParams)
  std::string node;                 // aic-nccl: the catalog node measured (default: from the folder)
  long max_fit = -1;            // GEMMs entering the least-squares fit (0: all; < 0: the format's default)
  std::string evaluate;         // aic-gemm: predict the tables with this calibration file (or none); fit nothing
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string today() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string percent(double mae) { return mae < 0 ? "-" : fmt_percent(mae, 1); }

void print_accuracy(std::ostream& out, const std::string& title, const std::vector<models::KernelSample>& samples,
                    const std::vector<std::pair<std::string, models::AccuracyTable>>& models_,
                    models::BucketBy by = models::BucketBy::kTokens) {
  if (samples.empty()) return;
  std::vector<std::string> headers = {"model", "op"};
  for (const auto& b : models::buckets(by)) headers.push_back(b.label);
  Table t(headers);
  for (std::size_t c = 2; c < headers.size(); ++c) t.set_align_right(c);
  for (const auto& [name, table] : models_) {
    for (const auto& row : table.rows) {
      std::vector<std::string> cells = {name, row.label};
      for (double m : row.mae) cells.push_back(percent(m));
      t.add_row(cells);
    }
  }
  out << title << " (" << samples.size() << " kernels): mean absolute error by "
      << (by == models::BucketBy::kTokens ? "token count (m)" : "measured kernel time") << "\n";
  t.print(out);
  out << "\n";
}

std::string param_text(const models::NamedParam& p) {
  if (p.kind == models::ParamKind::kTime) return units::format(*p.value, units::Dimension::kTime, 4);
  if (p.kind == models::ParamKind::kBandwidth) return units::format(*p.value, units::Dimension::kBandwidth, 4);
  return fmt_fixed(*p.value, 3);
}

void print_params(std::ostream& out, const models::KernelCalibration& c) {
  models::KernelParams before = c.uncalibrated, family = c.family, after = c.fitted;
  const auto b = models::named_params(before), f = models::named_params(family), a = models::named_params(after);
  Table t({"parameter", "uncalibrated", "family default", "fitted"});
  t.set_align_right(1), t.set_align_right(2), t.set_align_right(3);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::find(c.fitted_names.begin(), c.fitted_names.end(), a[i].name) == c.fitted_names.end()) continue;
    const bool per_op = a[i].name.find('.') != std::string::npos;
    t.add_row({a[i].name, per_op ? "(shared)" : param_text(b[i]), *f[i].value > 0 ? param_text(f[i]) : "(shared)",
               param_text(a[i])});
  }
  t.print(out);
  out << "\n";
}

// The catalog GPU a table was measured on (--device, or named by the table's folder).
hw::GpuSpec measured_gpu(const Context& ctx, const std::string& gpu_name) {
  const hw::Catalog catalog = hw::Catalog::load(ctx.configs_dir);
  if (!catalog.contains(hw::CatalogKind::kGpu, gpu_name))
    throw ConfigError("unknown GPU \"" + gpu_name + "\"", {"<command line>", 0, "--device"}, "see `exasim hw list --kind gpu`");
  return catalog.gpu(gpu_name);
}

// One line per sample (fit set, then held out) with the fitted tile model's prediction and, for
// GEMMs, the tile and split-K it chose: what a user needs to see which shapes the model misses.
void write_residuals(const std::string& path, const hw::GpuSpec& gpu, const models::KernelParams& params,
                     const std::vector<std::pair<const char*, const std::vector<models::KernelSample>*>>& sets) {
  std::ofstream f(path);
  if (!f) throw IoError("cannot write the residuals", {path, 0, ""}, "check the folder exists and is writable");
  f << "set,source,op,tp,tokens,m,n,k,batch,rows,cols,measured_us,predicted_us,error,bound,tile,split_k,library_tile,"
       "library_split_k,line,seq,context,heads,kv_heads,head_dim,window\n";
  f.precision(6);
  for (const auto& [set_name, set] : sets) {
    for (const models::KernelSample& s : *set) {
      const double t = models::predict_sample(gpu, params, s);
      std::string bound, tile;
      int split = 0;
      if (s.kind == models::SampleKind::kGemm) {
        const models::GemmPlan g = models::gemm_plan(gpu, params, s.dtype, s.m, s.n, s.k, s.batch, s.recipe);
        bound = std::string(models::bound_name(g.cost.bound));
        tile = std::to_string(g.tile.bm) + "x" + std::to_string(g.tile.bn);
        split = g.split_k;
      }
      f << set_name << ',' << s.source << ',' << s.op << ',' << s.tp << ',' << s.tokens
        << ',' << s.m << ',' << s.n << ',' << s.k << ',' << s.batch << ',' << s.rows << ',' << s.cols << ','
        << s.time_s * 1e6 << ',' << t * 1e6 << ',' << t / s.time_s - 1 << ',' << bound << ',' << tile << ',' << split << ','
        << (s.library_tile_m > 0 ? std::to_string(s.library_tile_m) + "x" + std::to_string(s.library_tile_n) : "") << ','
        << (s.library_split_k > 0 ? std::to_string(s.library_split_k) : "") << ',' << s.line << ',' << s.seq << ','
        << s.context << ',' << s.heads << ',' << s.kv_heads << ',' << s.head_dim << ',' << s.window << '\n';
    }
  }
  if (!f) throw IoError("cannot write the residuals", {path, 0, ""}, "check the disk has room");
}

// Fits and reports the GPU kernel models for `samples` measured on catalog GPU `gpu_name`.
int calibrate_gpu(const Context& ctx, const CalibrateOptions& o, const std::string& gpu_name,
                  const std::vector<models::KernelSample>& samples, const std::string& source,
                  const std::string& default_output = "") {
  const hw::GpuSpec gpu = measured_gpu(ctx, gpu_name);
  models::KernelCalibrationOptions opts;
  opts.fit_sources = o.fit_sources;
  opts.fit.samples = o.starts;
  opts.held_out_shapes = std::max(0.0, o.held_out_shapes);
  opts.max_fit_gemms = o.max_fit > 0 ? static_cast<std::size_t>(o.max_fit) : 0;
  opts.library_behaviours = o.library_behaviours;
  const models::KernelCalibration c = models::calibrate_kernels(gpu, samples, opts);
  std::ostream& out = std::cout;
  out << "exasim: kernel models of " << gpu.name << " fitted to " << c.fit_set.size() << " of " << samples.size()
      << " measured kernels (" << source << ")";
  if (!c.held_out.empty()) out << "; " << c.held_out.size() << " held out and predicted without refitting";
  out << "\n\n";
  print_params(out, c);
  const std::vector<std::string> at_bounds = models::parameters_at_bounds(c.fitted, c.fitted_names);
  std::string at_bounds_text;
  for (const std::string& s : at_bounds) at_bounds_text += (at_bounds_text.empty() ? "" : ", ") + s;
  if (!at_bounds.empty())
    out << "at a bound of its range, so not identified by these measurements: " << at_bounds_text << "\n";
  out << "uncalibrated: " << c.uncalibrated.source << "\nfamily default: " << c.family.source << "\n\n";
  const auto tile = models::tile_model_predictor(gpu);
  const auto roof = models::roofline_predictor(gpu);
  const auto closest = models::closest_tile_predictor(gpu);
  for (const auto* set : {&c.fit_set, &c.held_out}) {
    std::vector<models::KernelSample> gemms, mems, attention, moe;
    for (const auto& s : *set)
      (s.kind == models::SampleKind::kGemm           ? gemms
       : s.kind == models::SampleKind::kMemoryOp     ? mems
       : s.kind == models::SampleKind::kMoeExperts   ? moe
                                                     : attention)
          .push_back(s);
    const std::string which = set == &c.fit_set ? "fit set" : "held out";
    print_accuracy(out, which + ", GEMMs", gemms,
                   {{"tile model", models::accuracy_table(gemms, c.fitted, tile)},
                    {"roofline, 3 fitted", models::accuracy_table(gemms, c.roofline, roof)},
                    {"datasheet roofline", models::accuracy_table(gemms, models::datasheet_params(), roof)},
                    {"family default", models::accuracy_table(gemms, c.family, tile)},
                    {"uncalibrated", models::accuracy_table(gemms, c.uncalibrated, tile)},
                    {"closest tile (bound)", models::accuracy_table(gemms, c.fitted, closest)}});
    print_accuracy(out, which + ", GEMMs", gemms,
                   {{"tile model", models::accuracy_table(gemms, c.fitted, tile, models::BucketBy::kMeasuredTime)},
                    {"family default", models::accuracy_table(gemms, c.family, tile, models::BucketBy::kMeasuredTime)}},
                   models::BucketBy::kMeasuredTime);
    out << "closest tile (bound): the fitted model's candidate tile and split-K closest to each measured\n"
           "time, not a prediction: what a heuristic that chose the library's tile could reach; the gap\n"
           "to the tile model is the choice of tile\n\n";
    if (const models::TileAgreement a = models::tile_agreement(gpu, c.fitted, gemms); a.compared > 0) {
      out << which << ", tile choice: the model picks the library's tile on " << a.same_tile << " of " << a.compared
          << " GEMMs (" << fmt_percent(double(a.same_tile) / a.compared, 1) << "; tile and split-K: " << a.same_split
          << "); its mean absolute error there " << fmt_percent(a.error_same, 1) << ", elsewhere "
          << fmt_percent(a.error_other, 1) << "\n\n";
    }
    print_accuracy(out, which + ", attention", attention,
                   {{"tile model", models::accuracy_table(attention, c.fitted, tile, models::BucketBy::kMeasuredTime)},
                    {"family default", models::accuracy_table(attention, c.family, tile, models::BucketBy::kMeasuredTime)}},
                   models::BucketBy::kMeasuredTime);
    print_accuracy(out, which + ", MoE layers (routed experts)", moe,
                   {{"tile model", models::accuracy_table(moe, c.fitted, tile, models::BucketBy::kMeasuredTime)},
                    {"family default", models::accuracy_table(moe, c.family, tile, models::BucketBy::kMeasuredTime)}},
                   models::BucketBy::kMeasuredTime);
    print_accuracy(out, which + ", memory-bound ops", mems,
                   {{"tile model", models::accuracy_table(mems, c.fitted, tile)},
                    {"family default", models::accuracy_table(mems, c.family, tile)},
                    {"uncalibrated", models::accuracy_table(mems, c.uncalibrated, tile)}});
  }
  if (!o.residuals.empty()) {
    write_residuals(o.residuals, gpu, c.fitted, {{"fit", &c.fit_set}, {"held_out", &c.held_out}});
    out << "wrote " << o.residuals << " (per-sample residuals)\n";
  }
  models::CalibrationHeader h;
  h.gpu = gpu.name;
  h.date = o.date.empty() ? today() : o.date;
  h.source = source;
  std::ostringstream fit_text;
  h.fit.emplace_back("samples", std::to_string(c.fit_set.size()) + " fitted, " + std::to_string(c.held_out.size()) + " held out");
  if (opts.held_out_shapes > 0)
    h.fit.emplace_back("held_out", "whole (n, k) shapes, fraction " + fmt_fixed(opts.held_out_shapes, 2) + ", seed " +
                                       std::to_string(opts.split_seed) + "; " + std::to_string(opts.max_fit_gemms > 0 ? std::min(opts.max_fit_gemms, c.fit_set.size()) : c.fit_set.size()) +
                                       " GEMMs in the least-squares fit");
  // The held-out error of each op, by measured time: GEMMs, then attention.
  auto held_out_errors = [&](const std::string& key, auto is_kind) {
    std::vector<models::KernelSample> held;
    for (const auto& s : c.held_out)
      if (is_kind(s.kind)) held.push_back(s);
    if (held.empty()) return;
    for (const auto& row : models::accuracy_table(held, c.fitted, tile, models::BucketBy::kMeasuredTime).rows) {
      std::string text;
      for (std::size_t i = 0; i < row.mae.size(); ++i)
        text += (i ? ", " : "") + models::time_buckets()[i].label + " " + percent(row.mae[i]);
      h.fit.emplace_back(key + "." + row.label, text);
    }
  };
  held_out_errors("held_out_gemm_error", [](models::SampleKind k) { return k == models::SampleKind::kGemm; });
  held_out_errors("held_out_attention_error", [](models::SampleKind k) {
    return k == models::SampleKind::kAttentionPrefill || k == models::SampleKind::kAttentionDecode;
  });
  held_out_errors("held_out_moe_error", [](models::SampleKind k) { return k == models::SampleKind::kMoeExperts; });
  if (std::any_of(c.fit_set.begin(), c.fit_set.end(), [](const models::KernelSample& s) { return s.kind == models::SampleKind::kGemm; }))
    h.fit.emplace_back("gemm_mean_abs_error", fmt_percent(c.gemm_fit_error, 2));
  if (!at_bounds.empty()) h.fit.emplace_back("at_bounds", at_bounds_text);
  const bool memory_ops = std::any_of(c.fit_set.begin(), c.fit_set.end(),
                                      [](const models::KernelSample& s) { return s.kind == models::SampleKind::kMemoryOp; });
  if (memory_ops) h.fit.emplace_back("memory_op_mean_abs_error", fmt_percent(c.memory_fit_error, 2));
  const std::string file = default_output.empty() ? lower(gpu.name) + ".yaml" : default_output;
  const std::string path = o.output.empty() ? (fs::path(ctx.configs_dir) / "calibration" / file).string() : o.output;
  models::write_calibration(path, h, c.fitted, c.fitted_names);
  out << "wrote " << path << "\n";
  return 0;
}

std::string join_sources(const std::vector<std::string>& inputs) {
  std::string s = "Vidur op tables (microsoft/vidur, shared/data/profiles):";
  for (const auto& i : inputs) s += " " + fs::path(i).filename().string();
  return s;
}

int run_vidur(const Context& ctx, CalibrateOptions o) {
  std::vector<models::KernelSample> samples;
  std::string gpu = o.device;
  for (const std::string& path : o.inputs) {
    const std::string from_name = models::vidur_table_gpu(path);
    if (gpu.empty()) gpu = from_name;
    if (!from_name.empty() && from_name != gpu)
      throw ConfigError("tables of different GPUs (" + gpu + ", " + from_name + ")", {path, 0, ""},
                        "calibrate one GPU at a time, or name it with --device");
    auto s = models::read_vidur_op_table(path);
    samples.insert(samples.end(), s.begin(), s.end());
  }
  if (gpu.empty())
    throw ConfigError("cannot tell which GPU the tables were measured on", {o.input, 0, ""}, "give --device GPU");
  return calibrate_gpu(ctx, o, gpu, samples, join_sources(o.inputs));
}

// Leave one GPU out over several AIConfigurator GEMM tables: per GPU, the parameters fitted on
// the others and the error on it (models/calibration/leave_one_gpu_out.hpp). Writes no file.
int run_leave_one_gpu_out(const Context& ctx, const CalibrateOptions& o) {
  const hw::Catalog catalog = hw::Catalog::load(ctx.configs_dir);
  std::vector<models::MeasuredGpu> gpus;
  for (const std::string& path : o.inputs) {
    const std::string name = models::aic_table_gpu(path);
    if (name.empty() || !catalog.contains(hw::CatalogKind::kGpu, name))
      throw ConfigError("cannot tell which catalog GPU the table was measured on", {path, 0, ""},
                        "give tables from kernels-aic/<gpu>/ folders");
    gpus.push_back({catalog.gpu(name), models::read_aic_gemm_table(path).samples});
    models::drop_faster_than_hbm(gpus.back().gpu, gpus.back().gemms);
    models::clocks_from_power(gpus.back().gemms, gpus.back().gpu.tdp_w);
  }
  models::LeaveOneOutOptions lo;
  if (o.max_fit > 0) lo.fit_gemms_per_gpu = static_cast<std::size_t>(o.max_fit);
  lo.fit.samples = o.starts;
  models::KernelParams start = models::KernelParams::microbenchmark_defaults(gpus.front().gpu);
  const auto results = models::leave_one_gpu_out(gpus, start, lo);
  std::vector<std::string> headers = {"left out", "model", "op"};
  for (const auto& b : models::time_buckets()) headers.push_back(b.label);
  Table t(headers);
  for (std::size_t c = 3; c < headers.size(); ++c) t.set_align_right(c);
  for (const auto& r : results) {
    for (const auto& row : r.by_time.rows) {
      std::vector<std::string> cells = {r.gpu, "tile model", row.label};
      for (double m : row.mae) cells.push_back(percent(m));
      t.add_row(cells);
    }
    const auto& roof = models::accuracy_row(r.by_roofline, "all");
    std::vector<std::string> cells = {r.gpu, "datasheet roofline", "all"};
    for (double m : roof.mae) cells.push_back(percent(m));
    t.add_row(cells);
  }
  std::cout << "exasim: leave one GPU out: each GPU's GEMMs predicted from its datasheet and one parameter set\n"
               "fitted on the other " << gpus.size() - 1 << " GPUs' tables (" << lo.fit_gemms_per_gpu
            << " GEMMs of each); mean absolute error by measured kernel time\n";
  t.print(std::cout);
  return 0;
}

// `--evaluate FILE`: every row of one GPU's tables predicted as exasim kernel predicts it on that
// calibration (`none`: the datasheet + family defaults), by op and measured time; fits and
// writes nothing. How a GPU nobody measured is predicted from another's file (e.g. H200's tables
// on H100's calibration), or how well a file describes a new measurement.
int evaluate_calibration(const Context& ctx, const CalibrateOptions& o, const std::string& gpu_name,
                         const std::vector<models::KernelSample>& samples) {
  const hw::GpuSpec gpu = measured_gpu(ctx, gpu_name);
  models::Calibration cal;
  cal.kernel = models::KernelParams::defaults_for(gpu);
  if (o.evaluate != "none") {
    if (!fs::exists(o.evaluate))
      throw IoError("calibration file not found", {o.evaluate, 0, "--evaluate"}, "give a calibration YAML, or none");
    cal = models::load_calibration(cal, o.evaluate);
  }
  const auto tile = models::tile_model_predictor(gpu);
  std::vector<models::KernelSample> gemms, attention, moe;
  for (const auto& s : samples)
    (s.kind == models::SampleKind::kGemm ? gemms : s.kind == models::SampleKind::kMoeExperts ? moe : attention).push_back(s);
  std::cout << "exasim: " << gpu.name << "'s tables predicted on " << cal.kernel.source << "\n\n";
  print_accuracy(std::cout, "GEMMs", gemms,
                 {{"tile model", models::accuracy_table(gemms, cal.kernel, tile, models::BucketBy::kMeasuredTime)}},
                 models::BucketBy::kMeasuredTime);
  print_accuracy(std::cout, "attention", attention,
                 {{"tile model", models::accuracy_table(attention, cal.kernel, tile, models::BucketBy::kMeasuredTime)}},
                 models::BucketBy::kMeasuredTime);
  print_accuracy(std::cout, "MoE layers (routed experts)", moe,
                 {{"tile model", models::accuracy_table(moe, cal.kernel, tile, models::BucketBy::kMeasuredTime)}},
                 models::BucketBy::kMeasuredTime);
  // MoE layers have their own columns (the op's kernels); GEMM and attention tables share one.
  if (!o.residuals.empty() && !moe.empty()) write_moe_residuals(o.residuals, gpu, cal.kernel, moe);
  else if (!o.residuals.empty()) write_residuals(o.residuals, gpu, cal.kernel, {{"evaluated", &gemms}, {"evaluated", &attention}});
  return 0;
}

// AIConfigurator GEMM tables: one GPU per call (its folder names it), kernel-only times.
int run_aic_gemm(const Context& ctx, CalibrateOptions o) {
  if (o.leave_one_gpu_out) return run_leave_one_gpu_out(ctx, o);
  // One GPU's tables (its folder): GEMMs, and prefill and decode attention fitted on top of them.
  std::vector<models::KernelSample> samples;
  std::string tables;
  for (const std::string& in : o.inputs) {
    if (fs::absolute(in).parent_path() != fs::absolute(o.input).parent_path())
      throw ConfigError("tables of two GPUs", {in, 0, ""},
                        "give one GPU's tables (one kernels-aic folder) per run, or --leave-one-gpu-out for GEMMs");
    std::vector<models::KernelSample> read;
    if (models::is_aic_gemm_table(in)) {
      const models::AicGemmTable t = models::read_aic_gemm_table(in);
      read = t.samples;
      std::cout << "exasim: " << read.size() << " GEMMs read from " << in << " (" << t.empty_rows
                << " rows with a zero dimension left out)\n";
    } else if (models::is_aic_attention_table(in)) {
      read = models::read_aic_attention_table(in);
      std::cout << "exasim: " << read.size() << " attention calls read from " << in << "\n";
    } else if (models::is_aic_moe_table(in)) {
      read = read_moe_table(in, std::cout);
    } else {
      throw ConfigError("not an AIConfigurator GEMM, attention or MoE table", {in, 0, ""},
                        "give gemm_perf.csv, context_attention_perf.csv, generation_attention_perf.csv, moe_perf.csv");
    }
    samples.insert(samples.end(), read.begin(), read.end());
    tables += (tables.empty() ? "" : ", ") + fs::path(in).filename().string();
  }
  const std::string gpu = o.device.empty() ? models::aic_table_gpu(o.input) : o.device;
  if (gpu.empty())
    throw ConfigError("cannot tell which GPU the table was measured on", {o.input, 0, ""},
                      "give --device GPU (the table's folder is not one of kernels-aic's)");
  const hw::GpuSpec spec = measured_gpu(ctx, gpu);
  const models::FasterThanHbm dropped = models::drop_faster_than_hbm(spec, samples);
  if (dropped.decode)
    std::cout << "exasim: " << dropped.decode << " decode calls left out: they read their KV cache faster than " << gpu
              << "'s HBM peak, so it was not all in HBM\n";
  if (dropped.gemm)
    std::cout << "exasim: " << dropped.gemm << " GEMMs left out: they read their operands faster than " << gpu
              << "'s HBM peak, so the table's replays found them in L2\n";
  report_moe_faster_than_hbm(dropped, gpu, std::cout);
  if (const std::size_t capped = models::clocks_from_power(samples, spec.tdp_w))
    std::cout << "exasim: " << capped << " calls ran at " << gpu << "'s power limit (board power within "
              << 100 * (1 - models::kAtPowerLimit) << "% of " << spec.tdp_w << " W): priced at its sustained clocks\n";
  if (!o.evaluate.empty()) return evaluate_calibration(ctx, o, gpu, samples);
  if (o.held_out_shapes < 0) o.held_out_shapes = 0.25;
  if (o.max_fit < 0) o.max_fit = 6000;
  o.library_behaviours = true;  // ~100k rows per GPU: a spread subset fits in about a minute
  const std::string source = "AIConfigurator tables (ai-dynamo/aiconfigurator 095f58a, shared/data/kernels-aic/" +
                             fs::path(o.input).parent_path().filename().string() + "/: " + tables +
                             "): kernel times (CUDA-graph replay, launch excluded)";
  return calibrate_gpu(ctx, o, gpu, samples, source, lower(gpu) + "-aic.yaml");
}

// AIConfigurator MoE tables: one GPU's (its folder names it), predicted on --evaluate FILE | none,
// by default on the GPU's own calibration (configs/calibration/defaults.yaml). Nothing is fitted
// here: the file's MoE parameters (the permutes' bandwidth, each format's grouped GEMMs and fixed
// cost) were fitted with the other kernels (aic-attention with moe_perf.csv beside the tables) on
// the balanced rows of the shapes not held out; this predicts every row, the skewed ones too.
int run_aic_moe(const Context& ctx, CalibrateOptions o) {
  std::vector<models::KernelSample> samples;
  for (const std::string& in : o.inputs) {
    if (fs::absolute(in).parent_path() != fs::absolute(o.input).parent_path())
      throw ConfigError("tables of two GPUs", {in, 0, ""}, "give one GPU's moe_perf.csv per run");
    const std::vector<models::KernelSample> read = read_moe_table(in, std::cout);
    samples.insert(samples.end(), read.begin(), read.end());
  }
  const std::string gpu = o.device.empty() ? models::aic_table_gpu(o.input) : o.device;
  if (gpu.empty())
    throw ConfigError("cannot tell which GPU the table was measured on", {o.input, 0, ""},
                      "give --device GPU (the table's folder is not one of kernels-aic's)");
  report_moe_faster_than_hbm(models::drop_faster_than_hbm(measured_gpu(ctx, gpu), samples), gpu, std::cout);
  if (o.evaluate.empty()) {
    o.evaluate = models::calibration_file_for("", ctx.configs_dir, models::CalibrationFor::kGpu, gpu);
    if (o.evaluate.empty()) o.evaluate = "none";
  }
  return evaluate_calibration(ctx, o, gpu, samples);
}

// AIConfigurator NCCL tables: one node per call (its folder names the GPU and so the server).
int run_aic_nccl(const Context& ctx, CalibrateOptions o) {
  CollectiveCalibrateRequest r;
  r.tables = o.inputs, r.node = o.node, r.output = o.output;
  r.date = o.date.empty() ? today() : o.date;
  r.held_out_sizes = o.held_out_shapes < 0 ? 0.25 : o.held_out_shapes;
  r.starts = o.starts == 64 ? 16 : o.starts;  // 64 is the kernel fits' default
  r.evaluate = o.evaluate;
  return calibrate_collective_table(ctx, r, std::cout);
}

// GEMM measurements of a GPU device in an exasim-bench profile, as samples.
std::vector<models::KernelSample> profile_gpu_samples(const hw::Profile& profile, const std::string& path) {
  std::vector<models::KernelSample> out;
  for (std::size_t i = 0; i < profile.measurements.size(); ++i) {
    const hw::Measurement& m = profile.measurements[i];
    bool gpu = false;
    for (const auto& d : profile.devices) gpu = gpu || (d.index == m.device && d.kind == "gpu");
    if (!gpu || m.suite != "gemm" || !(m.time_s.median > 0)) continue;
    auto dim = [&](const char* k, double fallback) {
      auto it = m.shape.find(k);
      return it == m.shape.end() ? fallback : it->second;
    };
    models::KernelSample s;
    s.kind = models::SampleKind::kGemm;
    s.op = "gemm";
    s.source = fs::path(path).filename().string();
    s.line = static_cast<int>(i);
    s.dtype = dtype_from_name(m.dtype).value_or(DType::kBf16);
    s.m = dim("m", 0), s.n = dim("n", 0), s.k = dim("k", 0), s.batch = dim("batch", 1);
    s.tokens = s.m;
    s.time_s = m.time_s.median;
    auto chosen = [&](const char* k) {
      auto it = m.library.find(k);
      return it == m.library.end() ? 0 : static_cast<int>(it->second);
    };
    s.library_tile_m = chosen("tile_m"), s.library_tile_n = chosen("tile_n"), s.library_split_k = chosen("split_k");
    if (s.m > 0 && s.n > 0 && s.k > 0) out.push_back(s);
  }
  return out;
}

// exasim-bench profile: the CPU branch fits the CPU models; GPU GEMMs fit the kernel models.
int run_profile(const Context& ctx, CalibrateOptions o) {
  if (o.inputs.size() > 1)
    throw ConfigError("one profile at a time", {o.inputs[1], 0, ""}, "run exasim calibrate once per profile");
  const hw::Profile profile = hw::read_profile(o.input);
  const std::vector<models::KernelSample> gpu_samples = profile_gpu_samples(profile, o.input);
  if (!profile_has_cpu(profile) && gpu_samples.empty()) {
    throw ConfigError("the profile has no measurements to fit", {o.input, 0, "measurements"},
                      "run exasim-bench (e.g. exasim-bench --quick -o PROFILE.json)");
  }
  if (profile_has_cpu(profile)) return calibrate_cpu_profile(ctx, profile, o.input, o.device, o.output, std::cout);
  std::string gpu = o.device;
  for (const auto& d : profile.devices)
    if (gpu.empty() && d.kind == "gpu") gpu = d.name;
  return calibrate_gpu(ctx, o, gpu, gpu_samples, "exasim-bench profile " + fs::path(o.input).filename().string());
}

struct InputFormat {
  std::string_view name;
  std::string_view help;
  bool (*recognizes)(const std::string& path);
  int (*run)(const Context& ctx, CalibrateOptions o);
};

constexpr InputFormat kFormats[] = {
    {"vidur-ops", "Vidur op tables (<gpu>_<model>_ops.csv): GPU kernel models", models::is_vidur_op_table, run_vidur},
    {"profile", "exasim-bench profile (JSON): CPU models and GPU kernel models",
     [](const std::string& p) { return ends_with(p, ".json"); }, run_profile},
    {"aic-gemm", "AIConfigurator GEMM table (kernels-aic/<gpu>/gemm_perf.csv): the GEMM model",
     models::is_aic_gemm_table, run_aic_gemm},
    {"aic-attention", "AIConfigurator attention table (kernels-aic/<gpu>/context_ or generation_attention_perf.csv; give the GPU's gemm_perf.csv with it)",
     models::is_aic_attention_table, run_aic_gemm},
    {"aic-moe", "AIConfigurator MoE table (kernels-aic/<gpu>/moe_perf.csv): the fused MoE op on a calibration file (--evaluate; default: the GPU's own)",
     models::is_aic_moe_table, run_aic_moe},
    {"aic-nccl", "AIConfigurator NCCL table (kernels-aic/<gpu>/nccl_perf.csv, and custom_allreduce_perf.csv, wideep_deepep_normal / _ll_perf.csv, trtllm_alltoall_perf.csv beside it): the node's collective parameters and its MoE all-to-all kernels",
     [](const std::string& p) {
       return models::is_aic_nccl_table(p) || models::is_aic_deepep_table(p) || models::is_aic_nvlink_all_to_all_table(p);
     }, run_aic_nccl},
};

std::vector<std::string> format_names() {
  std::vector<std::string> out = {"auto"};
  for (const auto& f : kFormats) out.emplace_back(f.name);
  return out;
}

int run_calibrate(const Context& ctx, CalibrateOptions o) {
  o.input = o.inputs.front();
  for (const auto& in : o.inputs)
    if (!fs::exists(in)) throw IoError("cannot read input", {in, 0, ""}, "check the path");
  for (const auto& f : kFormats) {
    if (o.format == f.name || (o.format == "auto" && f.recognizes(o.input))) return f.run(ctx, o);
  }
  std::string known;
  for (const auto& f : kFormats) known += (known.empty() ? "" : "; ") + std::string(f.name) + ": " + std::string(f.help);
  throw ConfigError("cannot tell the format of the input", {o.input, 0, ""}, "give --format (" + known + ")");
}

}  // namespace

void add_calibrate_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand("calibrate", "fit model parameters to measurements (Vidur op tables, exasim-bench profiles, AIConfigurator GEMM and NCCL tables)");
  cmd->add_option("INPUT", opt->inputs, "measurements: Vidur *_ops.csv tables (several), or one PROFILE.json")->required();
  cmd->add_option("--format", opt->format, "input format")->check(CLI::IsMember(format_names()));
  cmd->add_option("--device,--gpu", opt->device,
                  "catalog name of the measured device, e.g. A100-SXM4-80GB or host-cpu (default: from the input)");
  cmd->add_option("--fit", opt->fit_sources,
                  "fit on these sources only (e.g. meta-llama_llama-2-7b-hf); the others are predicted")
      ->delimiter(',');
  cmd->add_option("-o,--output", opt->output,
                  "calibration file to write (default: configs/calibration/<gpu>.yaml; CPU: <host>-<date>.yaml)");
  cmd->add_option("--date", opt->date, "date written into the file (default: today, UTC)");
  cmd->add_option("--residuals", opt->residuals,
                  "also write every sample's measured and predicted time, tile and split-K to this CSV");
  cmd->add_option("--held-out-shapes", opt->held_out_shapes,
                  "fraction of GEMM (n, k) shapes (aic-nccl: message sizes) held out of the fit and predicted (default 0.25)")
      ->check(CLI::Range(0.0, 0.9));
  cmd->add_flag("--leave-one-gpu-out", opt->leave_one_gpu_out,
               "aic-gemm with several tables: predict each GPU from parameters fitted on the others");
  cmd->add_option("--max-fit", opt->max_fit, "GEMMs entering the least-squares fit, spread over the fit set (0: all; aic-gemm default 6000)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--node", opt->node, "aic-nccl: catalog node the table was measured on (default: the GPU's server)");
  cmd->add_option("--evaluate", opt->evaluate,
                  "aic-gemm / aic-attention: predict one GPU's tables with this calibration file (or none: the "
                  "datasheet + family defaults) as exasim kernel does; fits nothing and writes only --residuals (set evaluated); "
                  "aic-nccl: predict one node's NCCL, DeepEP and NVLink all-to-all tables with this file's collective parameters");
  cmd->add_option("--starts", opt->starts, "starting points sampled before the local fits")->check(CLI::NonNegativeNumber);
  cmd->callback([&ctx, opt] { ctx.handler = [&ctx, opt] { return run_calibrate(ctx, *opt); }; });
}

}  // namespace exasim::cli
