// Memory-bound kernel models: bytes per op by hand, bandwidth-bound time, launch floor,
// monotonicity, and the names the CLI and calibration files use.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "kernel_test_gpus.hpp"
#include "models/kernel/kernel_models.hpp"
#include "models/kernel/memory_op_model.hpp"

using namespace exasim;
using namespace exasim::models;
using exasim::testing::calibrated_params;
using exasim::testing::catalog_gpu;

TEST_CASE("memory ops: bytes each op moves, by hand") {
  const double r = 4096, c = 8192, x = r * c;
  CHECK(memory_op_traffic(MemoryOp::kResidualAdd, DType::kBf16, r, c).bytes == 3 * x * 2);
  CHECK(memory_op_traffic(MemoryOp::kSiluMul, DType::kBf16, r, c).bytes == 3 * x * 2);
  CHECK(memory_op_traffic(MemoryOp::kRmsNorm, DType::kBf16, r, c).bytes == 2 * x * 2 + c * 2);
  CHECK(memory_op_traffic(MemoryOp::kLayerNorm, DType::kFp32, r, c).bytes == 2 * x * 4 + 2 * c * 4);
  // Adam, bf16 weights and fp32 master/m/v/grads: 4 x 4 B in, 3 x 4 + 2 B out per parameter.
  CHECK(memory_op_traffic(MemoryOp::kAdam, DType::kBf16, 1e9, 1).bytes == exasim::testing::approx(30e9));
}

TEST_CASE("memory ops: large ops run at the achieved HBM bandwidth, tiny ones at the launch floor") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams p = calibrated_params(a100);
  const KernelCost add = memory_op(a100, p, MemoryOp::kResidualAdd, DType::kBf16, 16384, 8192);
  CHECK(add.bound == Bound::kHbm);
  const double bw = a100.hbm_bandwidth * p.memory_efficiency(MemoryOp::kResidualAdd);
  CHECK(add.time_s == exasim::testing::approx(p.memory_overhead(MemoryOp::kResidualAdd) + add.bytes / bw).epsilon(1e-9));
  const KernelCost tiny = memory_op(a100, p, MemoryOp::kRmsNorm, DType::kBf16, 1, 4096);
  CHECK(tiny.bound == Bound::kLaunch);
  CHECK(tiny.time_s < 2 * p.memory_overhead(MemoryOp::kRmsNorm));
  // Twice the data, about twice the time once bandwidth-bound.
  const KernelCost add2 = memory_op(a100, p, MemoryOp::kResidualAdd, DType::kBf16, 32768, 8192);
  const double o = p.memory_overhead(MemoryOp::kResidualAdd);
  CHECK((add2.time_s - o) / (add.time_s - o) == exasim::testing::approx(2).epsilon(1e-6));
}

TEST_CASE("memory ops: time never decreases with rows or columns") {
  const hw::GpuSpec a100 = catalog_gpu("A100-SXM4-80GB");
  const KernelParams p = calibrated_params(a100);
  for (std::size_t i = 0; i < kMemoryOpCount; ++i) {
    const auto op = static_cast<MemoryOp>(i);
    double by_rows = 0, by_cols = 0;
    for (double v : {1.0, 3.0, 64.0, 100.0, 1024.0, 4096.0, 65536.0}) {
      INFO(memory_op_name(op), " ", v);
      const double tr = memory_op(a100, p, op, DType::kBf16, v, 4096).time_s;
      const double tc = memory_op(a100, p, op, DType::kBf16, 512, v).time_s;
      CHECK(tr >= by_rows);
      CHECK(tc >= by_cols);
      by_rows = tr, by_cols = tc;
    }
  }
}

TEST_CASE("memory ops: every op has a name that reads back") {
  for (std::size_t i = 0; i < kMemoryOpCount; ++i) {
    const auto op = static_cast<MemoryOp>(i);
    CHECK(memory_op_from_name(memory_op_name(op)) == op);
  }
  CHECK_FALSE(memory_op_from_name("layer_norm").has_value());
}
