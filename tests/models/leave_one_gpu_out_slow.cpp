// Leave one GPU out on NVIDIA's measured GEMM tables (shared/data/kernels-aic, six GPUs): each
// GPU predicted from its catalog datasheet and one parameter set fitted on the other five. Slow
// (a few minutes); `exasim calibrate --leave-one-gpu-out TABLES...` prints the same table.
// Measured 2026-12-05: A100 23.9%, H100 16.2%, H200 20.0%, B200 22.4%, GB200 18.5%, L40S 46.2%
// (datasheet rooflines 55-139%). The bound asserted is 25% on the five data-centre GPUs; L40S
// only beats its roofline: its 350 W board holds ~57% of the boost clock under matrix load,
// a power fact its datasheet figures do not give and the other five cannot teach. The issue's
// target (15% per GPU) is not met yet (notes of issue 24).
#include <doctest/doctest.h>

#include <filesystem>

#include "kernel_test_gpus.hpp"
#include "models/calibration/aic_gemm_table.hpp"
#include "models/calibration/kernel_calibration.hpp"
#include "models/calibration/leave_one_gpu_out.hpp"

using namespace exasim;
using namespace exasim::models;
using exasim::testing::catalog_gpu;

TEST_CASE("leave one GPU out: every GPU of kernels-aic predicted from the others beats its datasheet roofline") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(EXASIM_SOURCE_DIR).parent_path() / "shared" / "data" / "kernels-aic";
  if (!fs::exists(dir)) {
    MESSAGE("shared/data/kernels-aic not found: skipped");
    return;
  }
  std::vector<MeasuredGpu> gpus;
  for (const char* folder : {"a100_sxm", "h100_sxm", "h200_sxm", "b200_sxm", "gb200", "l40s"}) {
    const std::string path = (dir / folder / "gemm_perf.csv").string();
    std::vector<KernelSample> all = read_aic_gemm_table(path).samples;
    gpus.push_back({catalog_gpu(aic_table_gpu(path)), spread_subset(all, 4000, 2)});  // predicted on 4000 each
  }
  LeaveOneOutOptions o;
  o.fit_gemms_per_gpu = 800;
  o.fit.samples = 16, o.fit.local_fits = 4, o.fit.robust_rounds = 2;
  const auto results = leave_one_gpu_out(gpus, KernelParams::microbenchmark_defaults(gpus[1].gpu), o);
  REQUIRE(results.size() == gpus.size());
  for (const LeftOutGpu& r : results) {
    const double roofline = accuracy_row(r.by_roofline, "all").mae.back();
    MESSAGE(r.gpu << ": left out " << r.mean_abs_error * 100 << "%, datasheet roofline " << roofline * 100 << "%");
    CHECK(r.mean_abs_error < roofline);
    if (r.gpu != "L40S") CHECK(r.mean_abs_error < 0.25);
  }
}
