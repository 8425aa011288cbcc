#include "sim/net/collective_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include "hw/error.hpp"
#include "models/calibration/kernel_calibration.hpp"
#include "models/collective/custom_all_reduce.hpp"
#include "sim/net/analytical_network.hpp"
#include "sim/net/group_placement.hpp"

namespace exasim::sim {

namespace {

using models::CollectiveParams;
using models::CollectiveSample;

CommKind comm_kind(models::Collective c) {
  switch (c) {
    case models::Collective::kAllReduce: return CommKind::kAllReduce;
    case models::Collective::kReduceScatter: return CommKind::kReduceScatter;
    case models::Collective::kAllGather: return CommKind::kAllGather;
    case models::Collective::kAllToAll: return CommKind::kAllToAll;
    case models::Collective::kBroadcast: return CommKind::kBroadcast;
    case models::Collective::kSendRecv: return CommKind::kSendRecv;
    case models::Collective::kReduce: return CommKind::kReduce;
  }
  return CommKind::kAllReduce;
}

bool reduces(models::Collective c) {
  return c == models::Collective::kAllReduce || c == models::Collective::kReduceScatter ||
         c == models::Collective::kReduce;
}

int size_class(double bytes) {
  constexpr double kKiB = 1024, kMiB = 1024 * kKiB;
  if (bytes < 64 * kKiB) return 0;
  if (bytes < kMiB) return 1;
  if (bytes < 16 * kMiB) return 2;
  return 3;
}

// Predicts every sample with one network (its plans cached per op and size by the planner).
std::vector<double> predict_all(const topologies::Cluster& node, const CollectiveParams& p,
                                const std::vector<CollectiveSample>& samples) {
  AnalyticalNetwork net(node, p);
  std::vector<double> out;
  out.reserve(samples.size());
  for (const CollectiveSample& s : samples) {
    const double nccl = net.cost(CommOp(comm_kind(s.op), s.bytes, place_group("packed", s.ranks, node))).time_s;
    // The engine's own all-reduce, or NCCL where that is faster (its tuner's choice).
    out.push_back(s.custom_kernel ? models::engine_all_reduce_time(nccl, s.bytes, s.ranks, node.intra.bandwidth, p) : nccl);
  }
  return out;
}

// The error table's name of a sample's collective: the op, or the engine's own all-reduce.
std::string group_name(const CollectiveSample& s) {
  return s.custom_kernel ? "custom_all_reduce" : std::string(models::collective_name(s.op));
}

double mean_error(const std::vector<double>& predicted, const std::vector<CollectiveSample>& samples) {
  double sum = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) sum += std::fabs(predicted[i] / samples[i].time_s - 1);
  return samples.empty() ? 0 : sum / static_cast<double>(samples.size());
}

}  // namespace

double predict_collective(const topologies::Cluster& node, const CollectiveParams& p, const CollectiveSample& s) {
  return predict_all(node, p, {s}).front();
}

std::vector<std::string> collective_parameters_for(const topologies::Cluster& node,
                                                   const std::vector<CollectiveSample>& samples) {
  std::vector<std::string> names;
  const std::string& fabric = node.intra.kind;
  names.emplace_back(fabric == "pcie" ? "pcie_efficiency" : fabric == "xgmi" ? "xgmi_efficiency" : "intra_efficiency");
  if (std::any_of(samples.begin(), samples.end(), [](const CollectiveSample& s) { return reduces(s.op); }))
    names.emplace_back("reduction_efficiency");
  if (node.intra.in_switch_reduction) names.emplace_back("nvls_efficiency");
  names.emplace_back("pipeline_fill_rounds");
  for (const char* n : {"ll128_efficiency", "ll_efficiency"}) names.emplace_back(n);
  for (const char* n : {"step_overhead", "ll128_step_overhead", "ll_step_overhead", "simple_base_latency",
                        "ll128_base_latency", "launch_overhead"})
    names.emplace_back(n);
  if (std::any_of(samples.begin(), samples.end(), [](const CollectiveSample& s) { return s.custom_kernel; }))
    for (const char* n : {"custom_all_reduce_efficiency", "custom_all_reduce_overhead"}) names.emplace_back(n);
  return names;
}

std::vector<CollectiveErrorRow> collective_errors(const topologies::Cluster& node, const CollectiveParams& p,
                                                  const std::vector<CollectiveSample>& samples) {
  const std::vector<double> predicted = predict_all(node, p, samples);
  std::map<std::string, CollectiveErrorRow> groups;
  std::vector<std::string> order;
  auto add = [&](const std::string& g, int cls, double e) {
    if (!groups.contains(g)) {
      groups[g].group = g;
      order.push_back(g);
    }
    CollectiveErrorRow& r = groups[g];
    for (int c : {cls, 4}) r.mean_abs_error[c] += e, r.count[c] += 1;
  };
  // Rows in a fixed order: per op and group size, then per op, then all.
  std::vector<std::size_t> index(samples.size());
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = i;
  std::stable_sort(index.begin(), index.end(), [&](std::size_t a, std::size_t b) {
    return std::tuple(samples[a].custom_kernel, samples[a].op, samples[a].ranks) <
           std::tuple(samples[b].custom_kernel, samples[b].op, samples[b].ranks);
  });
  for (std::size_t i : index) {
    const CollectiveSample& s = samples[i];
    const double e = std::fabs(predicted[i] / s.time_s - 1);
    add(group_name(s) + " x" + std::to_string(s.ranks), size_class(s.bytes), e);
  }
  for (std::size_t i : index) {
    const CollectiveSample& s = samples[i];
    add(group_name(s), size_class(s.bytes), std::fabs(predicted[i] / s.time_s - 1));
  }
  for (std::size_t i : index) add("all", size_class(samples[i].bytes), std::fabs(predicted[i] / samples[i].time_s - 1));
  std::vector<CollectiveErrorRow> out;
  for (const std::string& g : order) {
    CollectiveErrorRow r = groups[g];
    for (int c = 0; c < 5; ++c) r.mean_abs_error[c] = r.count[c] ? r.mean_abs_error[c] / r.count[c] : 0;
    out.push_back(r);
  }
  return out;
}

CollectiveCalibration calibrate_collectives(const topologies::Cluster& node, const CollectiveParams& start,
                                            const std::vector<CollectiveSample>& samples,
                                            const CollectiveFitOptions& o, std::vector<std::string> names) {
  for (const CollectiveSample& s : samples)
    if (s.ranks > node.gpus_per_node)
      throw ConfigError("a measured collective joins " + std::to_string(s.ranks) + " GPUs, the node has " +
                            std::to_string(node.gpus_per_node),
                        {"", s.line, "num_gpus"}, "calibrate on a node with as many GPUs as the table's groups");
  if (names.empty()) names = collective_parameters_for(node, samples);
  CollectiveCalibration c;
  c.fitted_names = names;
  for (const CollectiveSample& s : samples)
    (models::shape_held_out(s.bytes, 0, o.held_out_sizes, o.split_seed) ? c.held_out : c.fit_set).push_back(s);
  models::require_samples_for_fit("collectives", c.fit_set.size(), names.size(), o.samples_per_parameter);
  const int n = static_cast<int>(names.size());
  std::vector<const models::CollectiveParamSlot*> slots;
  Eigen::VectorXd lower(n), upper(n), x0(n);
  for (int i = 0; i < n; ++i) {
    slots.push_back(&models::collective_param_slot(names[i]));
    lower[i] = std::log(std::max(slots[i]->lower, 1e-12)), upper[i] = std::log(slots[i]->upper);
    x0[i] = std::clamp(std::log(std::max(start.*slots[i]->field, 1e-12)), lower[i], upper[i]);
  }
  auto params_at = [&](const Eigen::VectorXd& x) {
    CollectiveParams p = start;
    for (int i = 0; i < n; ++i) p.*slots[i]->field = std::exp(x[i]);
    return p;
  };
  // Relative error in log space: a 2x miss at 10 us weighs what it does at 10 ms.
  const models::ResidualFunction residuals = [&](const Eigen::VectorXd& x, Eigen::VectorXd& r) {
    const std::vector<double> pred = predict_all(node, params_at(x), c.fit_set);
    r.resize(static_cast<Eigen::Index>(pred.size()));
    for (std::size_t i = 0; i < pred.size(); ++i) r[static_cast<Eigen::Index>(i)] = std::log(pred[i] / c.fit_set[i].time_s);
  };
  std::mt19937 rng(o.seed);
  std::uniform_real_distribution<double> unit(0, 1);
  Eigen::VectorXd best = x0;
  double best_error = mean_error(predict_all(node, params_at(x0), c.fit_set), c.fit_set);
  for (int trial = 0; trial <= o.starts; ++trial) {
    Eigen::VectorXd x = x0;
    if (trial > 0)
      for (int i = 0; i < n; ++i) x[i] = lower[i] + unit(rng) * (upper[i] - lower[i]);
    models::levenberg_marquardt(x, lower, upper, residuals, o.least_squares);
    const double e = mean_error(predict_all(node, params_at(x), c.fit_set), c.fit_set);
    if (e < best_error) best_error = e, best = x;
  }
  c.fitted = params_at(best);
  c.fit_error = best_error;
  return c;
}

}  // namespace exasim::sim
