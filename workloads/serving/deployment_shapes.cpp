#include "workloads/serving/deployment_shapes.hpp"

#include "hw/error.hpp"
#include "workloads/serving/serving_memory.hpp"

namespace exasim::workloads::serving {

namespace {

bool fits(const ModelSpec& model, const PoolConfig& pool, const ServingConfig& cfg) {
  try {
    replica_memory(model, pool, cfg);
    return true;
  } catch (const PlanError&) {
    return false;
  }
}

std::string pool_label(const PoolConfig& p) {
  std::string s = std::to_string(p.replicas) + " x TP" + std::to_string(p.parallelism.tp);
  if (p.parallelism.pp > 1) s += " PP" + std::to_string(p.parallelism.pp);
  return s;
}

}  // namespace

std::string shape_label(const ServingConfig& c) {
  if (!c.disaggregated()) return pool_label(c.pools.front());
  const PoolConfig& p = c.pools[0];
  const PoolConfig& d = c.pools[1];
  if (p.parallelism.tp == d.parallelism.tp && p.gpu.name == d.gpu.name && p.parallelism.pp == d.parallelism.pp)
    return std::to_string(p.replicas) + "P+" + std::to_string(d.replicas) + "D x TP" + std::to_string(p.parallelism.tp);
  return "P " + pool_label(p) + " + D " + pool_label(d);
}

std::vector<DeploymentShape> deployment_shapes(const ServingConfig& base, const ModelSpec& model,
                                               const topologies::Cluster& cluster, int gpu_budget) {
  std::vector<DeploymentShape> out;
  PoolConfig pool = base.pools.front();
  pool.parallelism = ReplicaParallelism{};
  for (int tp = 1; tp <= cluster.gpus_per_node && tp <= gpu_budget; tp *= 2) {
    if (model.heads % tp != 0) continue;
    pool.parallelism.tp = tp;
    if (model.moe && base.pools.front().parallelism.ep > 1 && tp % base.pools.front().parallelism.ep == 0)
      pool.parallelism.ep = base.pools.front().parallelism.ep;
    else
      pool.parallelism.ep = 1;
    if (!fits(model, pool, base)) continue;
    const int replicas = gpu_budget / tp;
    DeploymentShape co{"", base};
    co.config.pools = {pool};
    co.config.pools[0].role = PoolRole::kMixed;
    co.config.pools[0].replicas = replicas;
    co.label = shape_label(co.config);
    out.push_back(co);
    for (int p = 1; p < replicas; ++p) {
      DeploymentShape pd{"", base};
      PoolConfig pre = pool, dec = pool;
      pre.role = PoolRole::kPrefill;
      pre.replicas = p;
      dec.role = PoolRole::kDecode;
      dec.replicas = replicas - p;
      pd.config.pools = {pre, dec};
      pd.label = shape_label(pd.config);
      out.push_back(pd);
    }
  }
  return out;
}

}  // namespace exasim::workloads::serving
