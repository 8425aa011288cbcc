#pragma once
// Deployment shapes for a GPU budget, for the capacity planner: co-located replicas at every TP
// degree that fits (1, 2, 4, 8 ... up to a node), and prefill/decode splits of the same replicas
// (1 prefill : R-1 decode ... R-1 : 1). Shapes whose weights leave no room for KV are left out.
#include <string>
#include <vector>

#include "topologies/cluster.hpp"
#include "workloads/model/model_spec.hpp"
#include "workloads/serving/serving_config.hpp"

namespace exasim::workloads::serving {

struct DeploymentShape {
  std::string label;     // "4 x TP2", "1P+3D x TP2"
  ServingConfig config;  // the scenario's engine settings with these pools
};

// `base`: the scenario's serving config (its first pool gives GPU, kernel and host link).
std::vector<DeploymentShape> deployment_shapes(const ServingConfig& base, const ModelSpec& model,
                                               const topologies::Cluster& cluster, int gpu_budget);

std::string shape_label(const ServingConfig& c);

}  // namespace exasim::workloads::serving
