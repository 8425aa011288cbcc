#include "workloads/planner/plan_search.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

#include "hw/config/json_text.hpp"
#include "hw/error.hpp"
#include "workloads/planner/plan_constraints.hpp"
#include "workloads/planner/plan_evaluation.hpp"
#include "workloads/reliability/goodput.hpp"
#include "workloads/training/training_plan.hpp"

namespace exasim::workloads::planner {

std::vector<std::string> serial_map(std::size_t n, const std::function<std::string(std::size_t)>& job) {
  std::vector<std::string> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(job(i));
  return out;
}

PlanMetrics metrics_of(const nlohmann::json& r) {
  PlanMetrics m;
  m.iteration_time_s = r.at("iteration_time_s").get<double>();
  m.tokens_per_s = r.at("tokens_per_s").get<double>();
  m.usd_per_million_tokens = r.at("cost").at("usd_per_million_tokens").get<double>();
  m.energy_per_token_j = r.at("energy").at("per_token_j").get<double>();
  m.memory_headroom_bytes = r.at("memory").at("capacity_per_gpu_bytes").get<double>() - r.at("memory").at("peak_per_gpu_bytes").get<double>();
  return m;
}

PlanMetrics metrics_of(const Estimate& e) {
  return {e.iteration_time_s, e.tokens_per_s, e.usd_per_million_tokens, e.energy_per_token_j, e.memory_headroom()};
}

namespace {

// The expected time to train the scenario's token budget at this plan's speed (0 without one).
PlanMetrics with_time_to_train(PlanMetrics m, const PlannerInputs& in, const Candidate& c) {
  const auto& config = in.scenario.reliability;
  if (!in.reliability || !config->train_tokens) return m;
  m.time_to_train_s = reliability::expected_time_to_train(*config, *in.reliability, candidate_config(in.base, c), m.iteration_time_s,
                                                          m.tokens_per_s * m.iteration_time_s);
  return m;
}

struct Scored {
  Candidate candidate;
  Estimate estimate;
  PlanMetrics metrics;
  std::size_t index = 0;  // enumeration order: the last tie-break, for determinism
};

// Lower score first; equal scores: more free memory first; then enumeration order.
template <typename T>
void rank(std::vector<T>& v, double (*score)(const PlanMetrics&), auto metrics, auto index) {
  std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) {
    const double sa = score(metrics(a)), sb = score(metrics(b));
    if (sa != sb) return sa < sb;
    if (metrics(a).memory_headroom_bytes != metrics(b).memory_headroom_bytes)
      return metrics(a).memory_headroom_bytes > metrics(b).memory_headroom_bytes;
    return index(a) < index(b);
  });
}

// Stage 1: every candidate checked and estimated.
std::vector<Scored> estimate_all(const PlannerInputs& in, Estimator& est, LoweringProbe& probe, const std::vector<Candidate>& all,
                                 double margin, SearchResult& result, const SearchOptions& o) {
  std::vector<Scored> out;
  std::set<std::tuple<double, double, double, double, double>> seen;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (o.progress && i % 4096 == 0) o.progress("estimate", i, all.size());
    const CheckResult check = check_candidate(est, probe, all[i], margin);
    if (!check.runnable) {
      ++result.rejected[check.key];
      continue;
    }
    Scored s{check.candidate, est.estimate(check.candidate), {}, i};
    s.metrics = with_time_to_train(metrics_of(s.estimate), in, s.candidate);
    // Settings the simulator does not tell apart (recompute selective vs none under a fused
    // attention kernel, ...) give bit-identical estimates: keep the first such plan.
    const auto key = std::make_tuple(s.estimate.iteration_time_s, s.estimate.memory.peak_bytes, s.estimate.gpu_power_w,
                                     s.estimate.compute_s, s.estimate.exposed_comm_s);
    if (!seen.insert(key).second) {
      ++result.duplicates;
      continue;
    }
    out.push_back(s);
  }
  if (o.progress) o.progress("estimate", all.size(), all.size());
  return out;
}

// The candidates stage 2 simulates, in stage-1 order.
std::vector<std::size_t> pick_for_simulation(const std::vector<Scored>& scored, const ObjectiveInfo& obj, std::size_t k) {
  std::vector<std::size_t> pick;
  if (obj.pareto) {
    std::vector<PlanMetrics> m;
    for (const auto& s : scored) m.push_back(s.metrics);
    for (const std::size_t i : pareto_frontier(m, obj.score)) pick.push_back(i);
    std::sort(pick.begin(), pick.end(), [&](std::size_t a, std::size_t b) { return scored[a].metrics.tokens_per_s > scored[b].metrics.tokens_per_s; });
    if (pick.size() > k) pick.resize(k);
    for (std::size_t i = 0; i < scored.size() && pick.size() < k; ++i)  // room left: the fastest others
      if (std::find(pick.begin(), pick.end(), i) == pick.end()) pick.push_back(i);
    return pick;
  }
  for (std::size_t i = 0; i < std::min(k, scored.size()); ++i) pick.push_back(i);
  return pick;
}

}  // namespace

namespace {

// The requested plans (SearchOptions::also_simulate) added to `plans`, or their rejections.
void add_requested(Estimator& est, LoweringProbe& probe, const std::vector<Scored>& scored, const SearchOptions& o,
                   std::vector<RankedPlan>& plans, SearchResult& result) {
  for (const Candidate& c : o.also_simulate) {
    auto same = [&](const RankedPlan& p) { return describe(p.candidate) == describe(c); };
    if (auto it = std::find_if(plans.begin(), plans.end(), same); it != plans.end()) {
      it->requested = true;
      continue;
    }
    const CheckResult check = check_candidate(est, probe, c, 0.0);
    if (!check.runnable) {
      result.requested_rejections.push_back(describe(c) + ": " + check.reason);
      continue;
    }
    // Its place in stage 1: its own, or that of the plan it duplicates (same estimate).
    const Estimate e = est.estimate(c);
    std::size_t at = 0;
    for (std::size_t i = 0; i < scored.size() && at == 0; ++i)
      if (scored[i].estimate.iteration_time_s == e.iteration_time_s && scored[i].estimate.memory.peak_bytes == e.memory.peak_bytes)
        at = i + 1;
    plans.push_back({c, e, at, {}, {}, false, true});
  }
}

// Stage 2: every plan simulated (through o.map), then ranked by the simulated objective.
void simulate_and_rank(const PlannerInputs& in, const ObjectiveInfo& obj, const SearchOptions& o, std::vector<RankedPlan>& plans) {
  std::size_t done = 0;
  const std::vector<std::string> reports = o.map(plans.size(), [&](std::size_t i) {
    const TrainingPlan plan(in.model, candidate_config(in.base, plans[i].candidate), in.cluster.gpu_count(),
                            std::max(in.cluster.gpus_per_node, plans[i].candidate.tp));
    const std::string text = config::to_json_text(evaluation_json(in.scenario, plan, evaluate_plan(in, plan)));
    if (o.progress) o.progress("simulate", ++done, plans.size());
    return text;
  });
  for (std::size_t i = 0; i < plans.size(); ++i) {
    plans[i].report = nlohmann::json::parse(reports[i]);
    plans[i].simulated = with_time_to_train(metrics_of(plans[i].report), in, plans[i].candidate);
  }
  auto metrics = [](const RankedPlan& p) -> const PlanMetrics& { return p.simulated; };
  auto index = [](const RankedPlan& p) { return p.estimate_rank == 0 ? std::size_t(-1) : p.estimate_rank; };
  if (!obj.pareto) {
    rank(plans, obj.score, metrics, index);
    return;
  }
  std::vector<PlanMetrics> m;
  for (const auto& p : plans) m.push_back(p.simulated);
  for (const std::size_t i : pareto_frontier(m, obj.score)) plans[i].pareto = true;
  rank(plans, [](const PlanMetrics& x) { return -x.tokens_per_s; }, metrics, index);
  std::stable_partition(plans.begin(), plans.end(), [](const RankedPlan& p) { return p.pareto; });
}

}  // namespace

SearchResult search_plans(const PlannerInputs& in, const SearchOptions& o) {
  const ObjectiveInfo& obj = find_objective(o.objective);
  SearchResult result;
  result.objective = obj.name;
  result.memory_margin = in.space.memory_margin.value_or(obj.default_memory_margin);
  if (obj.name == "time_to_train" && !(in.reliability && in.scenario.reliability->train_tokens)) {
    const config::Node& at = in.scenario.root.has("reliability") ? in.scenario.root["reliability"] : in.scenario.root;
    throw ConfigError("the time_to_train objective needs the token budget to train", {at.where().file, at.where().line, "reliability.tokens"},
                      "add reliability: {failures: ..., tokens: 15e12, ...} (configs/scenarios/llama3.1-405b-h100-16k.yaml)");
  }
  Estimator est(in);
  LoweringProbe probe(in);
  const std::vector<Candidate> all = enumerate_candidates(in.space, in.model, in.base, in.cluster);
  result.enumerated = all.size();
  std::vector<Scored> scored = estimate_all(in, est, probe, all, result.memory_margin, result, o);
  result.runnable = scored.size() + result.duplicates;
  if (scored.empty() && o.also_simulate.empty())
    throw PlanError("no plan of the space can run (" + std::to_string(all.size()) + " candidates)", {"", 0, "plan_space"},
                    "widen plan_space, lower memory_margin, or add GPUs");
  // Stage-1 order; Pareto objectives pick their frontier from a by-throughput order.
  auto metrics = [](const Scored& s) -> const PlanMetrics& { return s.metrics; };
  auto index = [](const Scored& s) { return s.index; };
  rank(scored, obj.pareto ? [](const PlanMetrics& m) { return -m.tokens_per_s; } : obj.score, metrics, index);
  std::vector<RankedPlan> plans;
  for (const std::size_t i : pick_for_simulation(scored, obj, static_cast<std::size_t>(std::max(1, o.top_k))))
    plans.push_back({scored[i].candidate, scored[i].estimate, i + 1, {}, {}, false, false});
  add_requested(est, probe, scored, o, plans, result);
  result.layer_cost_entries = est.layer_cost_entries();
  simulate_and_rank(in, obj, o, plans);
  result.plans = std::move(plans);
  return result;
}

}  // namespace exasim::workloads::planner
