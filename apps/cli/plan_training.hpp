#pragma once
// `exasim plan` for a training scenario: the two-stage plan search (workloads/planner/), a ranked
// table, why the best plan beats the runner-up, JSON {"plans": [...]} best first, and the
// power-capped what-if when the scenario gives power.facility_budget.
#include <string>

#include "workloads/scenario/scenario.hpp"

namespace exasim::cli {

struct TrainingPlanRequest {
  std::string objective;  // empty: throughput
  int top = 0;            // simulated plans; 0: 10
  std::string json_path;
};

int plan_training(const workloads::Scenario& s, const TrainingPlanRequest& request);

}  // namespace exasim::cli
