#pragma once
// Shared by the planner tests that check the closed form against independent figures: the
// training layer's memory model on every plan a space enumerates, and the engine's iteration
// time on a sample of runnable plans.
#include <doctest/doctest.h>

#include <functional>
#include <optional>
#include <vector>

#include "approx.hpp"
#include "hw/error.hpp"
#include "workloads/planner/plan_constraints.hpp"
#include "workloads/planner/plan_estimate.hpp"
#include "workloads/planner/plan_space.hpp"
#include "workloads/training/training_memory.hpp"
#include "workloads/training/training_plan.hpp"
#include "workloads/training/training_simulation.hpp"

namespace exasim::testing {

// Calls f(candidate, plan) for every enumerated candidate the training layer accepts on the
// scenario's cluster; returns how many there were.
template <typename F>
int for_each_buildable_plan(const workloads::planner::PlannerInputs& in, F&& f) {
  int built = 0;
  for (const auto& c : workloads::planner::enumerate_candidates(in.space, in.model, in.base, in.cluster)) {
    std::optional<workloads::TrainingPlan> plan;
    try {
      plan.emplace(in.model, workloads::planner::candidate_config(in.base, c), in.cluster.gpu_count(),
                   in.cluster.gpus_per_node);
    } catch (const PlanError&) {
      continue;
    }
    f(c, *plan);
    ++built;
  }
  return built;
}

// The closed-form memory against training_memory on every buildable plan of the scenario's space:
// the same peak stage, and its total, weights, gradients, optimizer states and activations within
// `epsilon` (relative). `each(candidate, plan)` sees every plan compared (to count kinds); returns
// how many were.
inline int check_closed_form_memory(const workloads::planner::PlannerInputs& in, double epsilon,
                                    const std::function<void(const workloads::planner::Candidate&,
                                                             const workloads::TrainingPlan&)>& each = {}) {
  workloads::planner::Estimator est(in);
  return for_each_buildable_plan(in, [&](const workloads::planner::Candidate& c, const workloads::TrainingPlan& plan) {
    const workloads::MemoryReport want = workloads::training_memory(plan);
    const workloads::planner::MemoryEstimate got = est.memory(c);
    INFO(workloads::planner::describe(c));
    if (each) each(c, plan);
    REQUIRE(got.peak_stage == want.peak_stage);
    const workloads::StageMemory& w = want.peak();
    CHECK(got.peak_bytes == testing::approx(w.total()).epsilon(epsilon));
    CHECK(got.weights == testing::approx(w.weights).epsilon(epsilon));
    CHECK(got.gradients == testing::approx(w.gradients).epsilon(epsilon));
    CHECK(got.optimizer == testing::approx(w.optimizer).epsilon(epsilon));
    CHECK(got.activations == testing::approx(w.activations).epsilon(epsilon));
  });
}

// The engine's iteration time of a candidate on the scenario's cluster.
inline double engine_time(const workloads::planner::PlannerInputs& in, const workloads::planner::Candidate& c) {
  const workloads::TrainingPlan plan(in.model, workloads::planner::candidate_config(in.base, c), in.cluster.gpu_count(),
                                     in.cluster.gpus_per_node);
  return workloads::simulate_training({plan, in.cluster, in.calibration.kernel, in.calibration.collective, in.cost, in.network})
      .iteration_time_s;
}

// The runnable plans of the scenario's space (those `keep` also accepts), every k-th of them:
// `want` plans spread deterministically across the enumeration's dimensions. Requires more than
// `at_least` runnable.
inline std::vector<workloads::planner::Candidate> sample_runnable(
    const workloads::planner::PlannerInputs& in, workloads::planner::Estimator& est, std::size_t want, std::size_t at_least,
    const std::function<bool(const workloads::planner::Candidate&)>& keep = {}) {
  workloads::planner::LoweringProbe probe(in);
  std::vector<workloads::planner::Candidate> runnable;
  for (const auto& c : workloads::planner::enumerate_candidates(in.space, in.model, in.base, in.cluster))
    if (!keep || keep(c))
      if (const auto r = workloads::planner::check_candidate(est, probe, c, 0.0); r.runnable) runnable.push_back(r.candidate);
  REQUIRE(runnable.size() > at_least);
  std::vector<workloads::planner::Candidate> sample;
  const std::size_t step = runnable.size() / want;
  for (std::size_t i = 0; i < runnable.size() && sample.size() < want; i += step) sample.push_back(runnable[i]);
  return sample;
}

}  // namespace exasim::testing
