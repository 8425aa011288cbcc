// NVIDIA AIConfigurator NCCL tables (kernels-aic nccl_perf.csv): the reader on a committed slice
// and on malformed tables, the split that holds out whole message sizes, the node fit recovering
// the parameters that generated its data, and the fit on the measured DGX H100 table.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "hw/error.hpp"
#include "located_error.hpp"
#include "models/calibration/aic_gemm_table.hpp"
#include "models/calibration/aic_nccl_table.hpp"
#include "models/calibration/calibration_file.hpp"
#include "../cli/cli_runner.hpp"
#include "network_fixture.hpp"
#include "sim/net/collective_calibration.hpp"

using namespace exasim;
using exasim::testing::approx;
using exasim::testing::cluster_of;
using models::Collective;
using models::CollectiveSample;

namespace {

const std::string kData = std::string(EXASIM_TEST_DATA) + "/kernels-aic";

// Every op on 2, 4 and 8 GPUs from 1 KiB to 512 MiB, timed by the model with `truth`.
std::vector<CollectiveSample> synthetic(const topologies::Cluster& node, const models::CollectiveParams& truth) {
  std::vector<CollectiveSample> out;
  for (Collective op : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter, Collective::kAllToAll})
    for (int ranks : {2, 4, 8})
      for (double bytes = 1024; bytes <= 512.0 * 1024 * 1024; bytes *= 4) {
        CollectiveSample s;
        s.op = op, s.ranks = ranks, s.bytes = bytes, s.dtype = "half";
        s.time_s = sim::predict_collective(node, truth, s);
        out.push_back(s);
      }
  // The engine's own all-reduce, as custom_allreduce_perf times it (NCCL where that is faster).
  for (int ranks : {2, 4, 8})
    for (double bytes = 256; bytes <= 64.0 * 1024 * 1024; bytes *= 4) {
      CollectiveSample s;
      s.op = Collective::kAllReduce, s.ranks = ranks, s.bytes = bytes, s.dtype = "bfloat16", s.custom_kernel = true;
      s.time_s = sim::predict_collective(node, truth, s);
      out.push_back(s);
    }
  return out;
}

}  // namespace

TEST_CASE("AIConfigurator NCCL table: ops, bytes from elements and dtype, milliseconds to seconds") {
  const std::string path = kData + "/h100_sxm/nccl_perf.csv";
  REQUIRE(models::is_aic_nccl_table(path));
  CHECK_FALSE(models::is_aic_nccl_table(kData + "/h100_sxm/gemm_perf.csv"));
  CHECK_FALSE(models::is_aic_gemm_table(path));
  const std::vector<CollectiveSample> s = models::read_aic_nccl_table(path);
  REQUIRE(s.size() == 12);
  // alltoall,int8,2,1048576,0.01471: 1 byte per element, the per-rank send buffer.
  CHECK(s[1].op == Collective::kAllToAll);
  CHECK(s[1].ranks == 2);
  CHECK(s[1].bytes == 1048576);
  CHECK(s[1].time_s == approx(14.71e-6).epsilon(1e-12));
  CHECK(s[1].line == 3);
  // all_reduce,half,8,67108864,0.5781: 2 bytes per element, 128 MiB.
  CHECK(s[5].op == Collective::kAllReduce);
  CHECK(s[5].ranks == 8);
  CHECK(s[5].bytes == 2.0 * 67108864);
  CHECK(s[5].time_s == approx(578.1e-6).epsilon(1e-9));
}

TEST_CASE("AIConfigurator custom all-reduce table: bfloat16 elements, milliseconds, the engine's kernel") {
  const std::string path = kData + "/h100_sxm/custom_allreduce_perf.csv";
  CHECK(models::is_aic_custom_all_reduce_table(path));
  CHECK(models::is_aic_nccl_table(path));  // exasim calibrate reads it with the NCCL table
  CHECK_FALSE(models::is_aic_custom_all_reduce_table(kData + "/h100_sxm/nccl_perf.csv"));
  const std::vector<CollectiveSample> s = models::read_aic_custom_all_reduce_table(path);
  REQUIRE(s.size() == 6);
  // 8,262144,0.01760288: 512 KiB of bfloat16 on 8 GPUs in 17.6 us.
  CHECK(s[4].op == Collective::kAllReduce);
  CHECK(s[4].custom_kernel);
  CHECK(s[4].ranks == 8);
  CHECK(s[4].bytes == 2.0 * 262144);
  CHECK(s[4].time_s == approx(17.60288e-6).epsilon(1e-6));
  CHECK(s[4].line == 6);
  const auto e = exasim::testing::located_error([&] { models::read_aic_custom_all_reduce_table(kData + "/bad/custom_one_gpu.csv"); });
  CHECK(e.first == 3);
  CHECK(e.second.starts_with("num_gpus"));
}

TEST_CASE("AIConfigurator NCCL table: a malformed row is refused with its file, line and column") {
  auto error_of = [](const std::string& file) {
    return exasim::testing::located_error([&] { models::read_aic_nccl_table(kData + "/bad/" + file); });
  };
  const auto op = error_of("nccl_unknown_op.csv");
  CHECK(op.first == 3);
  CHECK(op.second.find("op_name: unknown op_name \"broadcast\"") == 0);
  CHECK(op.second.find("alltoall") != std::string::npos);  // the known ones are listed
  CHECK_THROWS_AS(models::read_aic_nccl_table(kData + "/bad/absent.csv"), IoError);
  // nccl_huge_message: 2^40 half elements, 2 TiB in one call.
  exasim::testing::check_refusals(
      error_of, {{"nccl_one_gpu.csv", 2, "num_gpus"},
                 {"nccl_zero_latency.csv", 3, "latency: latency must be positive"},
                 {"nccl_header_only.csv", 1, ": no collective in the table"},
                 // 10^300 GPUs: refused as a count, never converted to int (issue 29's UBSan finding).
                 {"nccl_huge_group.csv", 2, "num_gpus: implausible num_gpus 1e300 (a collective joins at most 2^20 GPUs"},
                 {"nccl_huge_message.csv", 2,
                  "message_size: implausible message_size 1099511627776 (a call's buffer is at most 1 TiB"}});
}

TEST_CASE("collective fit: recovers a node's efficiencies, step latencies and per-call cost from data the model generated") {
  const auto node = cluster_of("{node: dgx-h100, nodes: 1}");
  models::CollectiveParams truth;
  truth.intra_efficiency = 0.70, truth.nvls_efficiency = 0.52, truth.reduction_efficiency = 0.9;
  truth.step_overhead_s = 6e-6, truth.ll128_step_overhead_s = 2.5e-6, truth.ll_step_overhead_s = 0.4e-6;
  truth.launch_overhead_s = 5e-6, truth.pipeline_fill_rounds = 0.4;
  truth.simple_base_latency_s = 30e-6, truth.ll128_base_latency_s = 6e-6;
  truth.ll128_efficiency = 0.8, truth.ll_efficiency = 0.4;
  truth.custom_all_reduce_efficiency = 0.45, truth.custom_all_reduce_overhead_s = 3e-6;
  const std::vector<CollectiveSample> samples = synthetic(node, truth);
  const std::vector<std::string> names = sim::collective_parameters_for(node, samples);
  CHECK(names == std::vector<std::string>{"intra_efficiency", "reduction_efficiency", "nvls_efficiency",
                                          "pipeline_fill_rounds", "ll128_efficiency", "ll_efficiency",
                                          "step_overhead", "ll128_step_overhead", "ll_step_overhead",
                                          "simple_base_latency", "ll128_base_latency", "launch_overhead",
                                          "custom_all_reduce_efficiency",
                                          "custom_all_reduce_overhead"});
  sim::CollectiveFitOptions o;
  o.starts = 64;  // as exasim calibrate: 16 find a local minimum since all-to-all pays a step per peer
  const sim::CollectiveCalibration c = sim::calibrate_collectives(node, {}, samples, o);
  // Whole sizes held out: no size is on both sides.
  std::set<double> fitted, held;
  for (const auto& s : c.fit_set) fitted.insert(s.bytes);
  for (const auto& s : c.held_out) held.insert(s.bytes);
  for (double b : held) CHECK_FALSE(fitted.contains(b));
  CHECK(!held.empty());
  CHECK(c.fit_set.size() + c.held_out.size() == samples.size());
  CHECK(c.fit_error < 0.005);
  const auto errors = sim::collective_errors(node, c.fitted, c.held_out);
  CHECK(errors.back().group == "all");
  CHECK(errors.back().mean_abs_error[4] < 0.005);
  CHECK(c.fitted.intra_efficiency == approx(0.70).epsilon(0.02));
  CHECK(c.fitted.nvls_efficiency == approx(0.52).epsilon(0.02));
  CHECK(c.fitted.reduction_efficiency == approx(0.9).epsilon(0.02));
  CHECK(c.fitted.launch_overhead_s == approx(5e-6).epsilon(0.05));
  CHECK(c.fitted.step_overhead_s == approx(6e-6).epsilon(0.05));
  CHECK(c.fitted.simple_base_latency_s == approx(30e-6).epsilon(0.05));
  CHECK(c.fitted.ll128_base_latency_s == approx(6e-6).epsilon(0.05));
  CHECK(c.fitted.pipeline_fill_rounds == approx(0.4).epsilon(0.05));
  CHECK(c.fitted.ll128_efficiency == approx(0.8).epsilon(0.03));
  CHECK(c.fitted.ll_efficiency == approx(0.4).epsilon(0.03));
  CHECK(c.fitted.custom_all_reduce_efficiency == approx(0.45).epsilon(0.02));
  CHECK(c.fitted.custom_all_reduce_overhead_s == approx(3e-6).epsilon(0.05));
  // The written section reads back to the fitted values.
  const std::string yaml = models::collective_calibration_yaml(c.fitted, c.fitted_names);
  const models::Calibration back = models::apply_calibration({}, config::load_string(yaml, "fitted.yaml"));
  CHECK(back.collective.intra_efficiency == approx(c.fitted.intra_efficiency).epsilon(1e-3));
  CHECK(back.collective.launch_overhead_s == approx(c.fitted.launch_overhead_s).epsilon(1e-3));
  CHECK(back.collective.simple_base_latency_s == approx(c.fitted.simple_base_latency_s).epsilon(1e-3));
  CHECK(back.collective.pipeline_fill_rounds == approx(c.fitted.pipeline_fill_rounds).epsilon(1e-3));
}

TEST_CASE("collective fit: too few measurements for its parameters is refused with the counts") {
  const auto node = cluster_of("{node: dgx-h100, nodes: 1}");
  std::vector<CollectiveSample> samples = synthetic(node, {});
  samples.resize(10);
  sim::CollectiveFitOptions o;
  o.held_out_sizes = 0;
  const std::size_t parameters = sim::collective_parameters_for(node, samples).size();
  REQUIRE(2 * parameters > 10);
  CHECK_THROWS_WITH_AS(sim::calibrate_collectives(node, {}, samples, o),
                       ("too few collectives to fit " + std::to_string(parameters) + " parameters: 10 in the fit set, at least " +
                        std::to_string(2 * parameters) + " needed").c_str(),
                       ConfigError);
}

TEST_CASE("collective fit: a table whose groups outnumber the node's GPUs is refused") {
  const auto node = cluster_of("{node: dgx-h100, nodes: 1}");
  CollectiveSample s;
  s.ranks = 16, s.bytes = 1 << 20, s.time_s = 1e-4, s.line = 7;
  CHECK_THROWS_AS(sim::calibrate_collectives(node, {}, {s}), ConfigError);
}

// Measured on the whole DGX H100 table (1008 calls, 25% of the sizes held out): catalog defaults
// 55% held out (3-5x too fast below 1 MiB); fitted 12.3% (2026-12-05), 11.2% with the pipeline
// fill per phase (2026-12-06, 4 starts). Bounds: the fitted model within 12.5% held out and the
// defaults at least four times worse; the targets (10% from 1 MiB, 15% below) are not
// met from 1 MiB yet.
TEST_CASE("collective fit on the measured DGX H100 NCCL table: held-out sizes within 12.5%") {
  namespace fs = std::filesystem;
  const fs::path table = fs::path(EXASIM_SOURCE_DIR).parent_path() / "shared/data/kernels-aic/h100_sxm/nccl_perf.csv";
  if (!fs::exists(table)) {
    MESSAGE("shared/data/kernels-aic not found: skipped");
    return;
  }
  const auto node = cluster_of("{node: dgx-h100, nodes: 1}");
  const std::vector<CollectiveSample> samples = models::read_aic_nccl_table(table.string());
  REQUIRE(samples.size() == 1008);
  sim::CollectiveFitOptions o;
  o.starts = 4;
  const sim::CollectiveCalibration c = sim::calibrate_collectives(node, {}, samples, o);
  const double fitted = sim::collective_errors(node, c.fitted, c.held_out).back().mean_abs_error[4];
  const double defaults = sim::collective_errors(node, {}, c.held_out).back().mean_abs_error[4];
  MESSAGE("held out: defaults ", defaults * 100, "%, fitted ", fitted * 100, "%");
  CHECK(fitted < 0.125);
  CHECK(defaults > 4 * fitted);
}

// `exasim collective --calibration FILE` runs on the file's collective parameters: on each row of
// the committed DGX H100 slice it gives what the fit's own predictor gives with the shipped fit
// (the calibration loop closed), and comes closer to the measurement than the catalog defaults.
TEST_CASE("cli: collective --calibration with the shipped DGX H100 fit predicts the table as the fit does, and is the default") {
  const std::string file = std::string(EXASIM_SOURCE_DIR) + "/configs/calibration/dgx-h100-aic-nccl.yaml";
  const auto node = cluster_of("{node: dgx-h100, nodes: 1}");
  const models::CollectiveParams fitted = models::load_calibration({}, file).collective;
  double fitted_error = 0, default_error = 0;
  const std::vector<CollectiveSample> samples = models::read_aic_nccl_table(kData + "/h100_sxm/nccl_perf.csv");
  for (const CollectiveSample& s : samples) {
    const std::string op = s.op == Collective::kAllToAll ? "all_to_all" : "all_reduce";
    const std::string args = "collective --cluster dgx-h100 --op " + op + " --bytes " +
                             std::to_string(static_cast<long long>(s.bytes)) + "B --ranks " + std::to_string(s.ranks) + " --json";
    const auto with = exasim::testing::run_cli(args + " --calibration '" + file + "'");
    const auto without = exasim::testing::run_cli(args + " --calibration none");
    // No flag: the node's own calibration (configs/calibration/defaults.yaml), exactly as if named.
    const auto plain = exasim::testing::run_cli(args);
    REQUIRE(plain.status == 0);
    CHECK(nlohmann::json::parse(plain.output).at("time_s") == nlohmann::json::parse(with.output).at("time_s"));
    CHECK(nlohmann::json::parse(plain.output).at("collective_parameters").get<std::string>().ends_with("dgx-h100-aic-nccl.yaml"));
    INFO(args, "\n", with.output);
    REQUIRE(with.status == 0);
    REQUIRE(without.status == 0);
    const auto j = nlohmann::json::parse(with.output);
    CHECK(j.at("collective_parameters") == file);
    CHECK(nlohmann::json::parse(without.output).at("collective_parameters") == "defaults");
    const double t = j.at("time_s").get<double>(), t0 = nlohmann::json::parse(without.output).at("time_s").get<double>();
    CHECK(t == approx(sim::predict_collective(node, fitted, s)).epsilon(1e-12));
    CHECK(t0 == approx(sim::predict_collective(node, {}, s)).epsilon(1e-12));
    fitted_error += std::fabs(t / s.time_s - 1) / static_cast<double>(samples.size());
    default_error += std::fabs(t0 / s.time_s - 1) / static_cast<double>(samples.size());
  }
  MESSAGE("12 rows: defaults ", default_error * 100, "%, fitted ", fitted_error * 100, "%");
  CHECK(fitted_error < default_error / 2);
  exasim::testing::check_clean_error(
      exasim::testing::run_cli("collective --cluster dgx-h100 --op all_reduce --bytes 1MiB --ranks 8 --calibration /no/such.yaml"));
}

// `exasim collective --kernel engine`: the serving engine's own all-reduce on the node's shipped
// calibration, as serving prices a TP all-reduce. On the committed H100 slice's rows the engine's
// kernel wins (2 and 8 GPUs, 2 KiB and 512 KiB) and comes within 15% of the measurement (held-out
// error of the fit: 8.2%); NCCL alone is 4-5x slower at 2 KiB, 1.4x at 512 KiB on 8 GPUs. Refused
// where it cannot run.
TEST_CASE("cli: collective --kernel engine prices the serving engine's all-reduce") {
  const std::vector<CollectiveSample> rows = models::read_aic_custom_all_reduce_table(kData + "/h100_sxm/custom_allreduce_perf.csv");
  int checked = 0;
  for (const CollectiveSample& s : rows) {
    if (s.bytes > 1024 * 1024) continue;  // 8 MiB: NCCL's range
    const std::string args = "collective --cluster dgx-h100 --op all_reduce --bytes " +
                             std::to_string(static_cast<long long>(s.bytes)) + "B --ranks " + std::to_string(s.ranks) + " --json";
    const auto engine = exasim::testing::run_cli(args + " --kernel engine");
    const auto nccl = exasim::testing::run_cli(args);
    INFO(args, "\n", engine.output);
    REQUIRE(engine.status == 0);
    const auto j = nlohmann::json::parse(engine.output);
    CHECK(j.at("algorithm") == "engine all-reduce");
    CHECK(j.at("kernel") == "engine");
    const double t = j.at("time_s").get<double>();
    CHECK(t == approx(s.time_s).epsilon(0.15));
    const double t_nccl = nlohmann::json::parse(nccl.output).at("time_s").get<double>();
    CHECK(t_nccl > (s.bytes < 65536 ? 2 * t : t));
    ++checked;
  }
  CHECK(checked == 4);
  CHECK(exasim::testing::run_cli("collective --cluster dgx-h100 --op all_gather --bytes 1MiB --ranks 8 --kernel engine").status != 0);
  CHECK(exasim::testing::run_cli("collective --cluster dgx-h100 --op all_reduce --bytes 1MiB --ranks 16 --kernel engine").status != 0);
  const auto none = exasim::testing::run_cli("collective --cluster dgx-h100 --op all_reduce --bytes 1MiB --ranks 8 --kernel engine --calibration none");
  CHECK(none.status != 0);
  CHECK(none.output.find("no engine all-reduce") != std::string::npos);
}
