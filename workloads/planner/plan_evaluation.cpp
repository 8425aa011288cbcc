#include "workloads/planner/plan_evaluation.hpp"

#include <algorithm>

#include "sim/engine.hpp"
#include "sim/interval_set.hpp"
#include "sim/net/network_registry.hpp"
#include "workloads/planner/power_cap.hpp"
#include "workloads/planner/timeline_power.hpp"
#include "workloads/training/training_report.hpp"

namespace exasim::workloads::planner {

namespace {

// The time split of simulate_training (training_simulation.cpp), for a timeline run again here.
// Applies the power limit (the cap, or TDP); when kernels slow down, runs the graph again and
// rescales the rates. Returns every compute task's power above idle.
std::vector<double> apply_limit(const PlannerInputs& in, const TrainingConfig& config, TrainingResult& r, double cap_w,
                                double& mean_clock) {
  CappedGraph capped = apply_power_cap(r.graph->graph, in.cluster.gpu, in.base.precision, cap_w, in.power.dvfs);
  mean_clock = capped.mean_clock;
  if (!capped.stretched) return std::move(capped.dynamic_w);
  auto tg = std::make_shared<TrainingGraph>();
  tg->graph = std::move(capped.graph);
  tg->comm_ops = r.graph->comm_ops;
  tg->comm_issuers = r.graph->comm_issuers;
  tg->stages = r.graph->stages;
  r.timeline = std::make_shared<sim::Timeline>(
      run_training_graph(*tg, in.cluster, in.calibration.collective, in.network, in.ranks, &r.events));
  r.graph = tg;
  const double period = iteration_time(*tg, *r.timeline, config);
  const double slower = r.iteration_time_s / period;
  r.iteration_time_s = period;
  for (double* rate : {&r.tokens_per_s, &r.samples_per_s, &r.tflops_per_gpu, &r.mfu, &r.hfu}) *rate *= slower;
  r.breakdown = time_breakdown(*tg, *r.timeline, r.iteration_time_s, config);
  return std::move(capped.dynamic_w);
}

}  // namespace

PlanEvaluation evaluate_plan(const PlannerInputs& in, const TrainingPlan& plan, double gpu_cap_w) {
  PlanEvaluation e;
  TrainingResult& r = e.result;
  r = simulate_training({plan, in.cluster, in.calibration.kernel, in.calibration.collective, in.cost, in.network, in.ranks, in.calibration.host});
  const double cap = gpu_cap_w < 0 ? in.power.gpu_cap_w : gpu_cap_w;
  e.power.gpu_cap_w = cap > 0 ? std::min(cap, in.cluster.gpu.tdp_w) : 0;
  const std::vector<double> dynamic_w = apply_limit(in, plan.config(), r, cap, e.power.mean_clock);
  const hw::GpuSpec& gpu = in.cluster.gpu;
  // One GPU per stage stands for its TP group and DP replicas (with all ranks: replica 0's GPUs,
  // the first of the graph's devices; a straggler's own power is not sampled).
  const auto devices = timeline_power(r.graph->graph, r.graph->comm_ops, *r.timeline, gpu, in.base.precision,
                                      r.iteration_time_s, dynamic_w, r.graph->stages.size());
  double energy = 0;
  const double n = static_cast<double>(devices.size());
  for (const DevicePower& d : devices) {
    energy += d.energy_j;
    e.power.peak_gpu_w = std::max(e.power.peak_gpu_w, d.peak_w);
    e.power.activity.matrix += d.activity.matrix / n;
    e.power.activity.vector += d.activity.vector / n;
    e.power.activity.hbm += d.activity.hbm / n;
    e.power.activity.link += d.activity.link / n;
  }
  r.gpu_power_w = energy / (n * r.iteration_time_s);
  e.power.split = models::power_split(gpu);
  e.power.cluster = models::cluster_power({in.cluster.gpu_count(), in.cluster.nodes, r.gpu_power_w, in.cluster.node_power_other_w,
                                           in.switch_port_gbps, in.cost.pue});
  r.power_avg_w = e.power.cluster.it_w;
  r.energy_per_iteration_j = r.power_avg_w * r.iteration_time_s;
  r.energy_per_token_j = r.energy_per_iteration_j / plan.tokens_per_iteration();
  r.cost = models::running_cost(in.cost, in.cluster.gpu_count(), r.power_avg_w, r.tokens_per_s);
  if (in.reliability) {
    e.goodput = reliability::job_goodput(*in.scenario.reliability, *in.reliability, plan.config(), r.iteration_time_s,
                                         r.tokens_per_s * r.iteration_time_s, in.scenario.simulation.seed);
  }
  return e;
}

nlohmann::json evaluation_json(const Scenario& s, const TrainingPlan& plan, const PlanEvaluation& e) {
  const TrainingResult& r = e.result;
  nlohmann::json j = training_result_json(s, plan, r);
  const PowerDetail& p = e.power;
  j["power"] = {{"avg_w", r.power_avg_w},
                {"per_gpu_w", r.gpu_power_w},
                {"peak_per_gpu_w", p.peak_gpu_w},
                {"facility_w", p.cluster.facility_w},
                {"gpus_w", p.cluster.gpus_w},
                {"nodes_other_w", p.cluster.nodes_other_w},
                {"switches_w", p.cluster.switches_w},
                {"gpu_cap_w", p.gpu_cap_w},
                {"mean_clock", p.mean_clock},
                {"activity", {{"matrix", p.activity.matrix}, {"vector", p.activity.vector}, {"hbm", p.activity.hbm}, {"link", p.activity.link}}},
                {"gpu_dynamic_split_w",
                 {{"matrix", p.split.matrix_w}, {"vector", p.split.vector_w}, {"hbm", p.split.hbm_w}, {"link", p.split.link_w}}}};
  j["energy"] = {{"per_iteration_j", r.energy_per_iteration_j},
                 {"per_token_j", r.energy_per_token_j},
                 {"facility_per_token_j", r.energy_per_token_j * s.cost.pue}};
  j["cost"] = {{"usd_per_hour", r.cost.usd_per_hour},
               {"usd_per_million_tokens", r.cost.usd_per_million_tokens},
               {"hardware_usd_per_hour", r.cost.hardware_usd_per_hour},
               {"energy_usd_per_hour", r.cost.energy_usd_per_hour},
               {"training_run_hours", r.cost.training_run_hours},
               {"training_run_usd", r.cost.training_run_usd}};
  if (e.goodput) j["goodput"] = reliability::goodput_json(*e.goodput);
  return j;
}

}  // namespace exasim::workloads::planner
