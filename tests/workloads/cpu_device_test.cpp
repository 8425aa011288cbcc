// CPU sockets as the devices of a scenario (cluster.cpu): the kernel API hands every kernel to the
// CPU models, so serving and training run on CPUs. Checked against closed forms of those models.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <string>

#include "hw/catalog.hpp"
#include "hw/cpu_device.hpp"
#include "models/cpu/cpu_gemm_model.hpp"
#include "models/cpu/cpu_kernels.hpp"
#include "models/cpu/cpu_memory_model.hpp"
#include "models/kernel/kernel_models.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/training_simulation.hpp"

using namespace exasim;

namespace {

const hw::Catalog& catalog() {
  static const hw::Catalog c = hw::Catalog::load(std::string(EXASIM_SOURCE_DIR) + "/configs");
  return c;
}

workloads::Scenario scenario(const std::string& yaml) {
  return workloads::scenario_from_node(config::load_string(yaml, "cpu-device-test.yaml"), catalog(),
                                       std::string(EXASIM_SOURCE_DIR));
}

const std::string kXeon = "cluster: {cpu: {base: intel-xeon-8480c, memory_capacity: 512 GiB}, gpus_per_node: 1, nodes: 1}\n";

}  // namespace

TEST_CASE("cpu device: the device view carries the socket's memory, bandwidth and SIMD peak") {
  const workloads::Scenario s = scenario(kXeon + "model: llama3.1-8b\ntraining: {seq_len: 1024, global_batch: 1}\n");
  const hw::GpuSpec& d = s.cluster.gpu;
  REQUIRE(d.host_cpu);
  CHECK(d.hbm_capacity_bytes == exasim::testing::approx(512.0 * (1ull << 30)));
  CHECK(d.hbm_bandwidth == exasim::testing::approx(307.2e9));
  // 56 cores x 2 AVX-512 FMA units x 16 fp32 lanes x 2 FLOP x 2.0 GHz.
  CHECK(d.peak(DType::kFp32) == exasim::testing::approx(56.0 * 2 * 16 * 2 * 2.0e9));
  CHECK(d.peak(DType::kBf16) == d.peak(DType::kFp32));
  CHECK_FALSE(d.supports(DType::kFp8));
}

TEST_CASE("cpu device: a decode GEMM streams its weights from DRAM over all cores") {
  const workloads::Scenario s = scenario(kXeon + "model: llama3.1-8b\ntraining: {seq_len: 1024, global_batch: 1}\n");
  const hw::GpuSpec& d = s.cluster.gpu;
  const models::CpuParams& p = models::cpu_params_or_defaults(*d.host_cpu, s.calibration.kernel.cpu);
  // [1 x 4096] x [4096 x 14336] bf16: 117 MB of weights, more than the 105 MB L3 but repeated
  // products would still hit it; in a model's pass they come from DRAM.
  const double n = 14336, k = 4096, weights = 2 * n * k;
  const double t = models::gemm_time(d, s.calibration.kernel, DType::kBf16, 1, n, k).time_s;
  const double dram = models::level_bandwidth(p, models::CpuLevel::kDram, d.host_cpu->cores).read;
  CHECK(t >= weights / dram);
  CHECK(t == exasim::testing::approx(weights / dram).epsilon(0.05));
  // A large product is compute-bound: near the SIMD peak at the GEMM efficiency.
  const double big = models::gemm_time(d, s.calibration.kernel, DType::kFp32, 4096, 4096, 4096).time_s;
  const double peak = models::cpu_peak_flops(*d.host_cpu, DType::kFp32, d.host_cpu->cores);
  CHECK(big >= 2 * 4096.0 * 4096 * 4096 / peak);
  CHECK(big < 2 * 4096.0 * 4096 * 4096 / (0.5 * peak));
}

TEST_CASE("cpu device: decode attention streams the KV cache, memory-bound ops their bytes") {
  const workloads::Scenario s = scenario(kXeon + "model: llama3.1-8b\ntraining: {seq_len: 1024, global_batch: 1}\n");
  const hw::GpuSpec& d = s.cluster.gpu;
  const models::KernelParams& k = s.calibration.kernel;
  models::DecodeShape shape;
  shape.batch = 8, shape.context = 4096, shape.heads = 32, shape.kv_heads = 8, shape.head_dim = 128;
  const double t1 = models::attention_decode(d, k, DType::kBf16, shape).time_s;
  shape.context = 8192;
  const double t2 = models::attention_decode(d, k, DType::kBf16, shape).time_s;
  CHECK(t2 / t1 == exasim::testing::approx(2.0).epsilon(0.05));  // KV bytes double
  const double norm1 = models::memory_op(d, k, models::MemoryOp::kRmsNorm, DType::kBf16, 4096, 4096).time_s;
  const double norm2 = models::memory_op(d, k, models::MemoryOp::kRmsNorm, DType::kBf16, 8192, 4096).time_s;
  CHECK(norm2 > norm1);
}

TEST_CASE("cpu device: a tiny model trains on two sockets and an fp8 plan is refused with the reason") {
  const std::string cluster =
      "cluster: {cpu: {base: intel-xeon-8480c, memory_capacity: 512 GiB}, gpus_per_node: 2, nodes: 1,\n"
      "          intra_node: {kind: pcie, bandwidth: 64 GB/s, latency: 1 us}}\n"
      "model: {layers: 4, hidden: 1024, heads: 16, ffn: 4096, vocab: 32000, max_seq_len: 1024}\n";
  const workloads::Scenario s =
      scenario(cluster + "training: {seq_len: 1024, global_batch: 4, precision: bf16, parallelism: {dp: 2}}\n");
  const workloads::TrainingPlan plan(s.model, *s.training, s.cluster.gpu_count(), s.cluster.gpus_per_node);
  const auto r = workloads::simulate_training({plan, s.cluster, s.calibration.kernel, s.calibration.collective, s.cost});
  CHECK(r.iteration_time_s > 0);
  // Model FLOPs over the two sockets' bf16 (fp32-lane) peak: a CPU cannot beat its SIMD peak.
  CHECK(r.mfu < 1.0);
  CHECK(r.mfu > 0.05);
  const workloads::Scenario fp8 =
      scenario(cluster + "training: {seq_len: 1024, global_batch: 4, precision: fp8, parallelism: {dp: 2}}\n");
  const workloads::TrainingPlan plan8(fp8.model, *fp8.training, 2, 2);
  CHECK_THROWS_WITH_AS(workloads::simulate_training({plan8, fp8.cluster, fp8.calibration.kernel, {}, {}}),
                       doctest::Contains("fp8"), PlanError);
}

TEST_CASE("cpu device: bad CPU clusters are one clear error each") {
  CHECK_THROWS_WITH_AS(scenario("cluster: {cpu: intel-xeon-8480c, gpus_per_node: 1, nodes: 1}\nmodel: llama3.1-8b\n"
                                "training: {seq_len: 1024, global_batch: 1}\n"),
                       doctest::Contains("memory capacity"), ConfigError);
  CHECK_THROWS_WITH_AS(scenario("cluster: {cpu: {base: intel-xeon-8480c, memory_capacity: 1 TiB}, gpu: A100-SXM4-80GB,"
                                " gpus_per_node: 1, nodes: 1}\nmodel: llama3.1-8b\ntraining: {seq_len: 1024, global_batch: 1}\n"),
                       doctest::Contains("not both"), ConfigError);
  CHECK_THROWS_WITH_AS(scenario("cluster: {cpu: {base: intel-xeon-8480c, memory_capacity: 1 TiB}, gpus_per_node: 2,"
                                " nodes: 1}\nmodel: llama3.1-8b\ntraining: {seq_len: 1024, global_batch: 2}\n"),
                       doctest::Contains("intra_node"), ConfigError);
}

TEST_CASE("cpu device: a calibration file with a cpu section gives the CPU models its fitted parameters") {
  const workloads::Scenario s = scenario(
      "cluster: {cpu: {base: host-cpu, memory_capacity: 16 GiB}, gpus_per_node: 1, nodes: 1}\nmodel: llama3.1-8b\n"
      "training: {seq_len: 1024, global_batch: 1}\n"
      "calibration: configs/calibration/amd-epyc-2core-vm-2026-12-02.yaml\n");
  REQUIRE(s.calibration.kernel.cpu);
  CHECK(s.calibration.kernel.cpu->all_threads == 2);
  CHECK(s.calibration.kernel.cpu->matrix_vector_parallel);
  CHECK(s.calibration.kernel.source.find("amd-epyc-2core-vm") != std::string::npos);
}
