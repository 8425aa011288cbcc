#include "workloads/planner/power_whatif.hpp"

#include <algorithm>

#include "hw/error.hpp"
#include "models/power/cluster_power.hpp"
#include "workloads/planner/plan_evaluation.hpp"

namespace exasim::workloads::planner {

PowerWhatIf power_cap_whatif(const PlannerInputs& in, const TrainingPlan& plan, const ParallelMap& map) {
  if (in.power.facility_budget_w <= 0)
    throw ConfigError("the power what-if needs a facility budget", {in.scenario.file, 0, "power.facility_budget"},
                      "add power: {facility_budget: 20 MW} to the scenario");
  const hw::GpuSpec& gpu = in.cluster.gpu;
  std::vector<double> caps = {gpu.tdp_w};
  for (const double c : models::whatif_caps(in.power, gpu.tdp_w))
    if (c < gpu.tdp_w) caps.push_back(c);
  // Each cap is simulated independently: spread over ranks like any other set of jobs.
  const std::vector<std::string> runs = map(caps.size(), [&](std::size_t i) {
    const PlanEvaluation e = evaluate_plan(in, plan, i == 0 ? 0.0 : caps[i]);
    const TrainingResult& r = e.result;
    return nlohmann::json{r.iteration_time_s, r.tokens_per_s, r.gpu_power_w, e.power.peak_gpu_w, e.power.mean_clock,
                          e.power.cluster.switches_w}.dump();
  });
  PowerWhatIf w;
  w.facility_budget_w = in.power.facility_budget_w;
  double uncapped = 0;
  for (std::size_t i = 0; i < caps.size(); ++i) {
    const auto v = nlohmann::json::parse(runs[i]);
    CapRow row;
    row.cap_w = caps[i];
    row.capped = i > 0;
    row.iteration_time_s = v[0];
    row.tokens_per_s = v[1];
    row.gpu_power_w = v[2];
    row.peak_gpu_w = v[3];
    row.mean_clock = v[4];
    if (i == 0) uncapped = row.tokens_per_s;
    row.throughput_loss = 1 - row.tokens_per_s / uncapped;
    models::ServerProvision server{in.cluster.gpus_per_node, row.cap_w, in.cluster.node_power_other_w,
                                   v[5].get<double>() / in.cluster.nodes, in.cost.pue};
    row.server_provision_w = server.facility_w();
    row.servers = models::servers_within_budget(w.facility_budget_w, server);
    row.fleet_tokens_per_s = row.tokens_per_s / in.cluster.gpu_count() * row.servers * in.cluster.gpus_per_node;
    w.rows.push_back(row);
  }
  return w;
}

nlohmann::json power_whatif_json(const PowerWhatIf& w) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CapRow& r : w.rows)
    rows.push_back({{"gpu_cap_w", r.cap_w}, {"capped", r.capped}, {"mean_clock", r.mean_clock},
                    {"iteration_time_s", r.iteration_time_s}, {"tokens_per_s", r.tokens_per_s},
                    {"throughput_loss", r.throughput_loss}, {"gpu_power_w", r.gpu_power_w}, {"peak_gpu_w", r.peak_gpu_w},
                    {"server_provision_w", r.server_provision_w}, {"servers", r.servers},
                    {"fleet_tokens_per_s", r.fleet_tokens_per_s}});
  return {{"facility_budget_w", w.facility_budget_w}, {"caps", rows}};
}

}  // namespace exasim::workloads::planner
