// The full accuracy check of the kernel models against Vidur's measured op tables
// (shared/data/profiles): fit on Llama-2-7B, Qwen-72B and CodeLlama-34B, predict the other
// models of the same GPU without refitting, and compare with the two roofline baselines.
// Slow (about a minute): the tables hold 82k A100 and 37k A40 kernels. `exasim calibrate`
// prints the same tables.
#include <doctest/doctest.h>

#include <filesystem>

#include "kernel_test_gpus.hpp"
#include "models/calibration/kernel_calibration.hpp"
#include "models/calibration/vidur_op_table.hpp"

using namespace exasim;
using namespace exasim::models;
using exasim::testing::catalog_gpu;

namespace {

namespace fs = std::filesystem;

std::vector<KernelSample> gemms_of(const std::string& prefix) {
  std::vector<KernelSample> out;
  const fs::path dir = fs::path(EXASIM_SOURCE_DIR).parent_path() / "shared" / "data" / "profiles";
  if (!fs::exists(dir)) return out;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(prefix + "_") && name.ends_with("_ops.csv")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    for (auto& s : read_vidur_op_table(f))
      if (s.kind == SampleKind::kGemm) out.push_back(s);
  return out;
}

void check_gpu(const std::string& gpu_name, const std::string& prefix, double max_layer_64, double max_gemm_64,
               double max_all) {
  const std::vector<KernelSample> samples = gemms_of(prefix);
  if (samples.empty()) {
    MESSAGE("shared/data/profiles not found: skipped");
    return;
  }
  const hw::GpuSpec gpu = catalog_gpu(gpu_name);
  KernelCalibrationOptions o;
  o.fit_sources = {"meta-llama_llama-2-7b-hf", "qwen_qwen-72b", "codellama_codellama-34b-instruct-hf"};
  const KernelCalibration c = calibrate_kernels(gpu, samples, o);
  REQUIRE(!c.held_out.empty());
  const AccuracyTable tile = accuracy_table(c.held_out, c.fitted, tile_model_predictor(gpu));
  const AccuracyTable roof = accuracy_table(c.held_out, c.roofline, roofline_predictor(gpu));
  const AccuracyTable sheet = accuracy_table(c.held_out, datasheet_params(), roofline_predictor(gpu));
  const std::size_t ge64 = 4, all = 5;  // token_buckets(): ">=64", "all"
  const double t_all = accuracy_row(tile, "all").mae[all], r_all = accuracy_row(roof, "all").mae[all];
  INFO(gpu_name, ": tile ", t_all, " roofline ", r_all, " datasheet ", accuracy_row(sheet, "all").mae[all]);
  CHECK(t_all <= max_all);
  CHECK(accuracy_row(tile, "all").mae[ge64] <= max_gemm_64);
  CHECK(accuracy_row(tile, "layer sum").mae[ge64] <= max_layer_64);
  CHECK(t_all < r_all);                                                     // beats the fitted roofline
  CHECK(accuracy_row(tile, "all").mae[ge64] < accuracy_row(roof, "all").mae[ge64]);
  CHECK(accuracy_row(sheet, "all").mae[all] > 0.25);                         // the datasheet roofline is far off
}

}  // namespace

// Measured at this commit: A100 5.7% per GEMM from 64 tokens, 5.6% over all, 3.4% per layer;
// A40 7.3%, 7.2%, 4.4% (7.8%, 7.8%, 4.6% before its L2 bandwidth was raised from 2.6 to 4 TB/s on
// the evidence of these tables, configs/hw/gpus.yaml). The bounds leave a little room for the fit's
// local minima.
TEST_CASE("kernel accuracy: A100 held-out models within 8% per GEMM (6% from 64 tokens), 5% per layer") {
  check_gpu("A100-SXM4-80GB", "a100", 0.05, 0.06, 0.08);
}

TEST_CASE("kernel accuracy: A40 held-out models within 8% per GEMM (8% from 64 tokens), 5% per layer") {
  check_gpu("A40", "a40", 0.05, 0.08, 0.08);
}
