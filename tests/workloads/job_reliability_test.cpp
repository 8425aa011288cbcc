// A job's interruption rate, checkpoint and restart costs from their parts
// (workloads/reliability/job_reliability.hpp): the Llama 3 failure rates give back their source's
// count on its own cluster, the checkpoint is the memory model's states of every parameter once,
// and its write and load follow the slowest of storage, node and PCIe, each by hand.
#include <doctest/doctest.h>

#include <string>

#include "approx.hpp"
#include "hw/catalog.hpp"
#include "hw/config/node.hpp"
#include "hw/error.hpp"
#include "located_error.hpp"
#include "workloads/reliability/job_reliability.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_plan.hpp"

namespace exasim {

namespace {

using testing::approx;

const std::string kSource = EXASIM_SOURCE_DIR;

const hw::Catalog& catalog() {
  static const hw::Catalog c = hw::Catalog::load(kSource + "/configs");
  return c;
}

// Llama 3's cluster (2,048 servers of 8 H100, a 400 Gb/s NIC per GPU) training `model`.
workloads::Scenario scenario(const std::string& reliability, int nodes = 2048, const std::string& model = "llama3.1-405b",
                             const std::string& extra = "") {
  const std::string text = "cluster: {gpu: H100-SXM5-80GB, gpus_per_node: 8, nodes: " + std::to_string(nodes) +
                           ", inter_node: {topology: fat-tree, nic: ib-ndr-400, nics_per_node: 8}}\n" +
                           "model: " + model + "\n" +
                           "training: {seq_len: 8192, micro_batch: 1, global_batch: " + std::to_string(nodes) +
                           ", parallelism: {tp: 8, pp: 1, dp: " + std::to_string(nodes) + "}" + extra + "}\n" +
                           "reliability: " + reliability + "\n";
  return workloads::scenario_from_node(config::load_string(text, "reliability-test.yaml"), catalog(), kSource);
}

workloads::reliability::JobCosts costs(const workloads::Scenario& s) {
  return workloads::reliability::job_costs(*s.reliability, s.cluster, s.model, *s.training);
}

}  // namespace

TEST_CASE("job reliability: Llama 3's failure rates give back 419 interruptions in 54 days on its cluster") {
  const auto c = costs(scenario("{failures: llama3-h100, checkpoint: {write_time: 10 s}, restart_time: 10 min}"));
  double per_day = 0;
  for (const auto& [component, rate] : c.interruptions_per_day) per_day += rate;
  CHECK(per_day * 54 == approx(419).epsilon(1e-4));  // the rates carry five digits
  CHECK(c.interruptions_per_day.at("gpu") * 54 == approx(196).epsilon(1e-4));
  CHECK(c.interruptions_per_day.at("hbm") * 54 == approx(72).epsilon(1e-4));
  CHECK(c.interruptions_per_day.at("host") * 54 == approx(46).epsilon(1e-4));
  CHECK(c.interruptions_per_day.at("network") * 54 == approx(35).epsilon(1e-4));
  CHECK(c.job_mtbf_s == approx(54 * 86400.0 / 419).epsilon(1e-4));  // ~3.1 h: "about one every three hours"
  // Half the cluster: half the devices, twice the time between interruptions.
  const auto half = costs(scenario("{failures: llama3-h100, checkpoint: {write_time: 10 s}, restart_time: 10 min}", 1024));
  CHECK(half.job_mtbf_s == approx(2 * c.job_mtbf_s).epsilon(1e-12));
  // An override of one component, on top of the catalog's others.
  const auto hbm = costs(scenario("{failures: {base: llama3-h100, hbm: 0}, checkpoint: {write_time: 10 s}, restart_time: 10 min}"));
  CHECK(1 / hbm.job_mtbf_s == approx(1 / c.job_mtbf_s - 3.3908e-6 * 16384 / 3600).epsilon(1e-9));
  // A given MTBF is kept as given.
  CHECK(costs(scenario("{job_mtbf: 5 h, checkpoint: {write_time: 10 s}, restart_time: 10 min}")).job_mtbf_s == 5 * 3600.0);
}

TEST_CASE("job reliability: the checkpoint's size and its write and load by hand") {
  const auto s = scenario("{failures: llama3-h100, storage: tectonic-llama3, checkpoint: {interval: optimal}, "
                          "restart: {detection: 5 min, reschedule: 2 min, startup: 8 min}}");
  const auto c = costs(s);
  // 16-bit weights and fp32 master weights, momentum and variance: 14 bytes a parameter
  // (ZeRO, Rajbhandari et al. SC'20), Llama 3.1 405B's 405.9 B parameters: 5.68 TB.
  CHECK(c.checkpoint_bytes == approx(14 * s.model.parameter_count()).epsilon(1e-12));
  CHECK(c.checkpoint_bytes == approx(14 * 405.9e9).epsilon(0.01));
  // 2,048 nodes: Tectonic's 2 TB/s bounds it (each node writes 2.8 GB at 25 GB/s, 0.11 s).
  CHECK(c.checkpoint_bound == "storage");
  CHECK(c.checkpoint_write_s == approx(c.checkpoint_bytes / 2e12).epsilon(1e-12));
  CHECK(c.checkpoint_load_s == approx(c.checkpoint_bytes / 2e12).epsilon(1e-12));
  CHECK(c.restart_s == approx(15 * 60 + c.checkpoint_load_s).epsilon(1e-12));
  // On 8 nodes each node's 25 GB/s link bounds it: a node writes an eighth.
  const auto few = costs(scenario("{failures: llama3-h100, storage: tectonic-llama3, checkpoint: {}, restart_time: 1 min}", 8,
                                  "llama3.1-8b"));
  CHECK(few.checkpoint_bound == "node");
  CHECK(few.checkpoint_write_s == approx(few.checkpoint_bytes / 8 / 25e9).epsilon(1e-12));
  // With a storage of 100 TB/s whose nodes reach 10 TB/s, each GPU's PCIe link to its host bounds it.
  const auto pcie = costs(scenario("{failures: llama3-h100, storage: {base: tectonic-llama3, node_bandwidth: 10 TB/s, write_bandwidth: 100 TB/s}, "
                                   "checkpoint: {}, restart_time: 1 min}",
                                   8, "llama3.1-8b"));
  CHECK(pcie.checkpoint_bound == "pcie");
  const auto s8 = scenario("{job_mtbf: 3 h, checkpoint: {write_time: 1 s}, restart_time: 1 min}", 8, "llama3.1-8b");
  REQUIRE(s8.cluster.host);
  CHECK(pcie.checkpoint_write_s == approx(pcie.checkpoint_bytes / 64 / s8.cluster.host->pcie_bandwidth).epsilon(1e-12));
}

TEST_CASE("job reliability: the checkpoint holds what the memory model puts on the GPUs, each shard once") {
  // Llama 3.1 405B on TP 8, PP 14 (126 layers, 9 a stage), DP 128, ZeRO-1: each GPU holds the 16-bit
  // weights of its stage's layers (replicated over DP) and 1/128 of their fp32 optimizer states.
  // The checkpoint is one replica's weights and every GPU's optimizer shard.
  const auto s = scenario("{failures: llama3-h100, storage: tectonic-llama3, checkpoint: {}, restart_time: 1 min}");
  exasim::workloads::TrainingConfig c = *s.training;
  c.parallelism.tp = 8;
  c.parallelism.pp = 14;
  c.parallelism.dp = 128;
  c.global_batch = c.parallelism.dp;
  c.zero = 1;
  const int gpus = 8 * 14 * c.parallelism.dp;
  const exasim::workloads::TrainingPlan plan(s.model, c, gpus, 8);
  const auto memory = exasim::workloads::training_memory(plan);
  double weights = 0, optimizer = 0;
  for (const auto& stage : memory.stages) {
    weights += stage.weights * 8;                           // one replica: the stage's TP ranks
    optimizer += stage.optimizer * 8 * c.parallelism.dp;    // every GPU's shard
  }
  // Layer norms are replicated over TP, not sharded: the sum counts them 8 times (< 0.01%).
  CHECK(weights + optimizer == approx(costs(s).checkpoint_bytes).epsilon(1e-3));
}

TEST_CASE("job reliability: an asynchronous checkpoint stalls for its copy to host memory and uploads behind the training") {
  const auto s = scenario("{failures: llama3-h100, storage: tectonic-llama3, checkpoint: {mode: async}, restart_time: 10 min}");
  const auto c = costs(s);
  REQUIRE(s.cluster.host);
  // Each of the 16,384 GPUs copies its 1/16,384 of the 5.68 TB over PCIe (0.35 GB: ~7 ms); the
  // upload is the synchronous write without that copy: Tectonic's 2 TB/s.
  CHECK(c.checkpoint_bound == "pcie");
  CHECK(c.checkpoint_write_s == approx(c.checkpoint_bytes / 16384 / s.cluster.host->pcie_bandwidth).epsilon(1e-12));
  CHECK(c.checkpoint_upload_s == approx(c.checkpoint_bytes / 2e12).epsilon(1e-12));
  // Given times are kept; an upload time without mode: async is refused.
  const auto given = costs(scenario("{job_mtbf: 3 h, checkpoint: {mode: async, write_time: 1 s, upload_time: 2 min}, restart_time: 10 min}"));
  CHECK(given.checkpoint_write_s == 1);
  CHECK(given.checkpoint_upload_s == 120);
  const auto e = testing::located_error(
      [] { (void)scenario("{job_mtbf: 3 h, checkpoint: {write_time: 1 s, upload_time: 2 min}, restart_time: 10 min}"); });
  CHECK(e.second.starts_with("reliability.checkpoint.upload_time: an upload overlapping training"));
}

TEST_CASE("job reliability: what cannot be computed, or does not make sense, is refused with its key") {
  using testing::located_error;
  const auto error = [](const std::string& reliability) {
    return located_error([&] { (void)scenario(reliability, 8, "llama3.1-8b"); }).second;
  };
  CHECK(error("{job_mtbf: 3 h, failures: llama3-h100, checkpoint: {write_time: 1 s}, restart_time: 1 min}")
            .starts_with("reliability.failures: give job_mtbf or failures"));
  CHECK(error("{checkpoint: {write_time: 1 s}, restart_time: 1 min}").starts_with("reliability: how often"));
  CHECK(error("{failures: llama3-h10, checkpoint: {write_time: 1 s}, restart_time: 1 min}").find("llama3-h100") !=
        std::string::npos);  // did you mean
  CHECK(error("{failures: {base: llama3-h100, gpu: -1e-6}, checkpoint: {write_time: 1 s}, restart_time: 1 min}")
            .starts_with("reliability.failures.gpu: a failure rate cannot be negative"));
  CHECK(error("{failures: {base: llama3-h100, hbm: 0.5}, checkpoint: {write_time: 1 s}, restart_time: 1 min}")
            .starts_with("reliability.failures.hbm: more than one interruption per 100 device-hours"));
  CHECK(error("{job_mtbf: 3 h, checkpoint: {interval: 1 h}, restart_time: 1 min}").starts_with("reliability.checkpoint: a checkpoint needs"));
  CHECK(error("{job_mtbf: 3 h, checkpoint: {write_time: 1 s}, restart: {detection: 1 min}}").starts_with("reliability.restart: restart parts"));
  CHECK(error("{job_mtbf: 3 h, checkpoint: {write_time: 1 s}}").starts_with("reliability: what a restart costs"));
  CHECK(error("{job_mtbf: 3 h, storage: tape, checkpoint: {}, restart_time: 1 min}").starts_with("reliability.storage"));
  // LoRA's checkpoint is its adapters: a size computed from the whole model would be wrong.
  const auto lora = scenario("{job_mtbf: 3 h, storage: tectonic-llama3, checkpoint: {}, restart_time: 1 min}", 8, "llama3.1-8b",
                             ", lora: {rank: 16}");
  CHECK_THROWS_AS(costs(lora), PlanError);
  const auto given = scenario("{job_mtbf: 3 h, storage: tectonic-llama3, checkpoint: {write_time: 2 s}, restart_time: 1 min}", 8,
                              "llama3.1-8b", ", lora: {rank: 16}");
  CHECK(costs(given).checkpoint_write_s == 2);
}

}  // namespace exasim
