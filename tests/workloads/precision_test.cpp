// fp8 training: GEMMs run at the fp8 rate, but every GEMM's activation operand is cast first, so
// an iteration speeds up by less than the 2x of the peak rates; on a GPU without fp8 units the
// simulator falls back to the next rate it has and fp8 cannot be faster.
#include <doctest/doctest.h>

#include "training_fixture.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

double iteration(const std::string& gpu, DType precision) {
  const ModelSpec model = testing::gpt(8, 8192, 64);
  TrainingConfig cfg = testing::config(1, 1, 1, 4);
  cfg.precision = precision;
  topologies::Cluster cluster = testing::ideal_cluster(1, 1);
  cluster.gpu = testing::catalog().gpu(gpu);
  cluster.gpu.hbm_capacity_bytes = 1e15;  // this test is about speed, not fitting
  const TrainingPlan plan(model, cfg, 1, 1);
  return simulate_training({plan, cluster, models::KernelParams::defaults_for(cluster.gpu), {}, {}}).iteration_time_s;
}

}  // namespace

TEST_CASE("fp8 GEMMs speed up a compute-bound iteration by less than the peak ratio") {
  const double bf16 = iteration("H100-SXM5-80GB", DType::kBf16);
  const double fp8 = iteration("H100-SXM5-80GB", DType::kFp8);
  CHECK(fp8 < 0.9 * bf16);
  CHECK(fp8 > 0.5 * bf16);
}
