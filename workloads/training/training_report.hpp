#pragma once
// The machine-readable result of a training run: the `--json` keys of DESIGN.md, SI units.
#include <nlohmann/json.hpp>

#include "workloads/scenario/scenario.hpp"
#include "workloads/training/training_simulation.hpp"

namespace exasim::workloads {

nlohmann::json training_result_json(const Scenario& scenario, const TrainingPlan& plan, const TrainingResult& r);

}  // namespace exasim::workloads
