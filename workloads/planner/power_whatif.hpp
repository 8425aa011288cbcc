#pragma once
// A power-capped what-if in the manner of POLCA (Patel et al., ASPLOS'24): a facility has a
// fixed power budget; servers provisioned at a GPU cap below TDP draw less at worst, so more of
// them fit, while each runs slower (DVFS). For every cap: the plan simulated at that cap, the
// servers the budget holds when provisioned at it, and the tokens/s of that fleet, assuming the
// job's per-GPU throughput carries over to a fleet of that size (stated simplification).
#include <vector>

#include "workloads/planner/plan_search.hpp"
#include "workloads/training/training_plan.hpp"

namespace exasim::workloads::planner {

struct CapRow {
  double cap_w = 0;            // provisioned GPU power (TDP when uncapped)
  bool capped = false;
  double mean_clock = 1;
  double iteration_time_s = 0;
  double tokens_per_s = 0;     // of the simulated job
  double throughput_loss = 0;  // 1 - tokens_per_s / uncapped
  double gpu_power_w = 0;      // average per GPU
  double peak_gpu_w = 0;
  double server_provision_w = 0;  // facility power one server is provisioned for
  int servers = 0;             // that fit the budget
  double fleet_tokens_per_s = 0;
};

struct PowerWhatIf {
  double facility_budget_w = 0;
  std::vector<CapRow> rows;    // caps in the order given; the first row is uncapped (TDP)
};

// Throws ConfigError when the scenario gives no power.facility_budget or a cap below the floor.
PowerWhatIf power_cap_whatif(const PlannerInputs& in, const TrainingPlan& plan, const ParallelMap& map = serial_map);

nlohmann::json power_whatif_json(const PowerWhatIf& w);

}  // namespace exasim::workloads::planner
