#include "workloads/reliability/job_reliability.hpp"

#include <algorithm>

#include "hw/error.hpp"
#include "models/memory/model_state_memory.hpp"

namespace exasim::workloads::reliability {

namespace {

struct Transfer {
  double seconds = 0;
  std::string bound;
};

// Each GPU's share over its PCIe link to host memory (0 where the cluster's host side is unknown).
double host_copy_s(double bytes, const topologies::Cluster& cluster) {
  if (!cluster.host || !(cluster.host->pcie_bandwidth > 0)) return 0;
  return bytes / cluster.gpu_count() / cluster.host->pcie_bandwidth;
}

// Every rank moves its share of `bytes` at once (fully parallel save and load): the slowest of the
// storage system as a whole, each node's link to it, and each GPU's PCIe link to its host.
Transfer parallel_transfer(double bytes, double system_bandwidth, const hw::StorageSpec& storage,
                           const topologies::Cluster& cluster, bool through_pcie = true) {
  Transfer t{bytes / system_bandwidth, "storage"};
  const double node = bytes / cluster.nodes / storage.node_bandwidth;
  if (node > t.seconds) t = {node, "node"};
  const double pcie = through_pcie ? host_copy_s(bytes, cluster) : 0;
  if (pcie > t.seconds) t = {pcie, "pcie"};
  return t;
}

}  // namespace

double checkpoint_bytes(const ModelSpec& model, const TrainingConfig& training) {
  if (training.lora)
    throw PlanError("a LoRA checkpoint holds the adapters, whose size is not computed here", {"", 0, "reliability.checkpoint"},
                    "give checkpoint.write_time, and restart_time rather than restart parts");
  const models::PrecisionBytes bytes;
  return model.parameter_count() * (bytes.weight + bytes.optimizer);
}

ElasticReplicas elastic_replicas(const TrainingConfig& plan) {
  const Parallelism& p = plan.parallelism;
  if (plan.zero > 0) return {0, "ZeRO-" + std::to_string(plan.zero) + " shards the states over the replicas"};
  if (p.ep > 1) return {0, "the experts are spread over the replicas (ep " + std::to_string(p.ep) + ")"};
  if (p.dp < 2) return {0, "one data-parallel replica"};
  return {p.dp, ""};
}

JobCosts job_costs(const ReliabilityConfig& c, const topologies::Cluster& cluster, const ModelSpec& model,
                   const TrainingConfig& training) {
  JobCosts j;
  if (c.job_mtbf_s) {
    j.job_mtbf_s = *c.job_mtbf_s;
  } else {
    const hw::FailureRatesSpec& f = *c.failures;
    const double gpus = cluster.gpu_count(), nodes = cluster.nodes;
    const double nics = cluster.inter ? nodes * cluster.inter->nics_per_node : 0;
    const std::pair<const char*, double> per_hour[] = {
        {"gpu", f.gpu * gpus},         {"hbm", f.hbm * gpus},   {"software", f.software * gpus}, {"nvlink", f.nvlink * nodes},
        {"host", f.host * nodes},      {"nic", f.nic * nics},   {"network", f.network * nics}};
    double total = 0;
    for (const auto& [component, rate] : per_hour) {
      j.interruptions_per_day[component] = 24 * rate;
      total += rate;
    }
    if (!(total > 0))
      throw PlanError("the failure rates " + f.name + " give this job no interruptions", {"", 0, "reliability.failures"},
                      "give at least one component a rate, or job_mtbf");
    j.job_mtbf_s = 3600 / total;
    if (j.job_mtbf_s < 60)
      throw PlanError("the failure rates give this job an interruption every " + std::to_string(j.job_mtbf_s) + " s",
                      {"", 0, "reliability.failures"}, "rates are per device-hour: check them");
  }
  // The checkpoint's size, where a time is to be computed from it (the reader asked for storage then).
  if (!c.checkpoint_write_s || (c.checkpoint_async && !c.checkpoint_upload_s) || !c.restart_s) j.checkpoint_bytes = checkpoint_bytes(model, training);
  if (c.checkpoint_write_s) {
    j.checkpoint_write_s = *c.checkpoint_write_s;
    j.checkpoint_bound = "given";
  } else if (c.checkpoint_async) {  // the stall is each GPU's copy of its shard to pinned host memory
    j.checkpoint_write_s = host_copy_s(j.checkpoint_bytes, cluster);
    if (!(j.checkpoint_write_s > 0))
      throw PlanError("the copy of an asynchronous checkpoint to host memory needs the GPUs' PCIe link, which this cluster's servers do not state",
                      {"", 0, "reliability.checkpoint"}, "give checkpoint.write_time");
    j.checkpoint_bound = "pcie";
  } else {
    const Transfer w = parallel_transfer(j.checkpoint_bytes, c.storage->write_bandwidth, *c.storage, cluster);
    j.checkpoint_write_s = w.seconds;
    j.checkpoint_bound = w.bound;
  }
  if (c.checkpoint_async) {
    j.checkpoint_upload_s = c.checkpoint_upload_s ? *c.checkpoint_upload_s
                                                  : parallel_transfer(j.checkpoint_bytes, c.storage->write_bandwidth, *c.storage,
                                                                      cluster, false).seconds;
  }
  if (c.restart_s) {
    j.restart_s = *c.restart_s;
  } else {
    j.checkpoint_load_s = parallel_transfer(j.checkpoint_bytes, c.storage->read_bandwidth, *c.storage, cluster).seconds;
    j.restart_s = c.restart->detection_s + c.restart->reschedule_s + c.restart->startup_s + j.checkpoint_load_s;
  }
  return j;
}

}  // namespace exasim::workloads::reliability
