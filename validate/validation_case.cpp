#include "validate/validation_case.hpp"

#include <filesystem>

#include "hw/error.hpp"
#include "traces/request_source_factory.hpp"
#include "validate/flop_formulas.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/serving/serving_simulation.hpp"
#include "workloads/training/training_simulation.hpp"

namespace exasim::validate {

namespace {

using config::Node;

YAML::Node merge_yaml(const YAML::Node& base, const YAML::Node& over) {
  if (!base.IsMap() || !over.IsMap()) return YAML::Clone(over);
  YAML::Node out = YAML::Clone(base);
  for (const auto& kv : over) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& b = base;
    out[key] = b[key].IsDefined() ? merge_yaml(b[key], kv.second) : YAML::Clone(kv.second);
  }
  return out;
}

// The source's measurement as an iteration time, using the source's own conventions.
double measured_iteration_time(const Node& m, const workloads::Scenario& s, const workloads::TrainingPlan& plan,
                               CaseResult& r) {
  m.check_keys({"tflops_per_gpu", "mfu", "flop_formula", "iteration_time_s", "tokens_per_s", "tokens_per_s_per_gpu"});
  if (m.has("iteration_time_s")) {
    r.metric = "iteration_time_s";
    r.measured_value = m["iteration_time_s"].as_number();
    return r.measured_value;
  }
  if (m.has("tokens_per_s")) {
    r.metric = "tokens_per_s";
    r.measured_value = m["tokens_per_s"].as_number();
    return plan.tokens_per_iteration() / r.measured_value;
  }
  if (m.has("tokens_per_s_per_gpu")) {
    r.metric = "tokens_per_s_per_gpu";
    r.measured_value = m["tokens_per_s_per_gpu"].as_number();
    return plan.tokens_per_iteration() / (r.measured_value * s.cluster.gpu_count());
  }
  // TFLOP/s per GPU, given directly or as MFU against the GPU's dense peak in the training precision.
  r.metric = m.has("mfu") ? "mfu" : "tflops_per_gpu";
  r.measured_value = m.has("mfu") ? m["mfu"].as_number() : m.required("tflops_per_gpu").as_number();
  const double tflops = m.has("mfu") ? r.measured_value * s.cluster.gpu.peak(plan.config().precision) / 1e12
                                     : r.measured_value;
  const std::string name = m.required("flop_formula").as_string();
  const FlopFormula* f = find_flop_formula(name);
  if (!f) m["flop_formula"].fail("unknown FLOP formula \"" + name + "\"", "use megatron-sc21 or megatron-model");
  const FlopInputs in{double(plan.config().global_batch), double(plan.config().seq_len), double(s.model.layers),
                      double(s.model.hidden), double(s.model.vocab)};
  return f->flops(in) / (tflops * 1e12 * s.cluster.gpu_count());
}

// The scenario is merged from the file's defaults and the case, so its lines are lost: a plan that
// cannot run names the case and points at its `measured` block.
[[noreturn]] void rethrow_in_case(const PlanError& e, const ValidationCase& c) {
  SourceLocation where = c.measured.where();
  where.key = e.where().key.empty() ? "scenario" : e.where().key;
  throw PlanError("case " + c.id + ": " + e.what(), where, e.hint());
}

// A serving case: the scenario's workload replayed; measured output tokens/s (or requests/s).
CaseResult run_serving_case(const ValidationCase& c, const workloads::Scenario& s) {
  namespace sv = workloads::serving;
  const Node& m = c.measured;
  m.check_keys({"output_tokens_per_s", "requests_per_s"});
  CaseResult r;
  r.id = c.id;
  r.kind = "serving";
  r.metric = m.has("requests_per_s") ? "requests_per_s" : "output_tokens_per_s";
  r.measured_value = m.required(r.metric).as_number();
  const sv::ServingConfig& cfg = *s.serving_config;
  auto source = traces::make_request_source(cfg.workload, s.simulation.seed, cfg.base_dir);
  const sv::ServingInputs in{s.model, s.cluster, cfg, s.calibration.collective, s.cost, s.simulation.seed, nullptr, {}};
  try {
    const sv::ServingResult res = sv::simulate_serving(in, *source);
    r.predicted_value = r.metric == "requests_per_s" ? res.requests_per_s : res.output_tokens_per_s;
  } catch (const PlanError& e) {
    rethrow_in_case(e, c);
  }
  r.error = r.predicted_value / r.measured_value - 1;
  return r;
}

}  // namespace

Node merge_nodes(const Node& base, const Node& over) {
  if (!base.defined()) return over;
  return Node(merge_yaml(base.yaml(), over.yaml()), over.origin(), over.path());
}

std::vector<ValidationCase> load_cases(const std::string& path) {
  const Node root = config::load_file(path);
  root.check_keys({"source", "choices", "defaults", "cases"});
  const std::string source = root.has("source") ? root["source"].as_string() : "";
  auto strings = [](const Node& list) {
    if (!list.is_sequence()) list.fail("choices must be a list of strings", "one item per choice: - \"micro_batch 1 (not stated)\"");
    std::vector<std::string> out;
    for (std::size_t k = 0; k < list.size(); ++k) out.push_back(list.at(k).as_string());
    return out;
  };
  const std::vector<std::string> shared = root.has("choices") ? strings(root["choices"]) : std::vector<std::string>{};
  const Node cases = root.required("cases");
  if (!cases.is_sequence()) cases.fail("cases must be a list");
  std::vector<ValidationCase> out;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Node c = cases.at(i);
    c.check_keys({"id", "scenario", "measured", "choices", "note"});
    ValidationCase v;
    v.id = c.required("id").as_string();
    v.source = source;
    v.file = path;
    v.scenario = merge_nodes(root["defaults"], c.required("scenario"));
    v.measured = c.required("measured");
    v.choices = shared;
    v.shared_choices = shared.size();
    if (c.has("choices"))
      for (auto& s : strings(c["choices"])) v.choices.push_back(std::move(s));
    out.push_back(std::move(v));
  }
  return out;
}

ValidationCase with_calibration_first(const ValidationCase& c, const std::string& item) {
  ValidationCase out = c;
  YAML::Node root = YAML::Clone(c.scenario.yaml());
  YAML::Node list(YAML::NodeType::Sequence);
  list.push_back(item);
  const YAML::Node& scenario = c.scenario.yaml();
  if (const YAML::Node own = scenario["calibration"]) {  // the case's own, after the item
    if (own.IsSequence())
      for (const YAML::Node& i : own) list.push_back(YAML::Clone(i));
    else
      list.push_back(YAML::Clone(own));
  }
  root["calibration"] = list;
  out.scenario = Node(root, c.scenario.origin(), c.scenario.path());
  return out;
}

CaseResult run_case(const ValidationCase& c, const hw::Catalog& catalog) {
  const std::string dir = std::filesystem::path(c.scenario.file()).parent_path().string();
  const workloads::Scenario s = workloads::scenario_from_node(c.scenario, catalog, dir);
  if (s.serving) return run_serving_case(c, s);
  if (!s.training) c.scenario.fail("validation cases simulate training or serving scenarios");
  CaseResult r;
  r.id = c.id;
  r.kind = "training";
  try {
    const workloads::TrainingPlan plan(s.model, *s.training, s.cluster.gpu_count(), s.cluster.gpus_per_node);
    const auto result = workloads::simulate_training(
        {plan, s.cluster, s.calibration.kernel, s.calibration.collective, s.cost, s.simulation.network, {}, s.calibration.host});
    r.measured_iteration_s = measured_iteration_time(c.measured, s, plan, r);
    r.predicted_iteration_s = result.iteration_time_s;
    // Every other metric is a rate per iteration: it scales with 1 / iteration time.
    r.predicted_value = r.metric == "iteration_time_s" ? r.predicted_iteration_s
                                                       : r.measured_value * r.measured_iteration_s / r.predicted_iteration_s;
    r.error = r.predicted_iteration_s / r.measured_iteration_s - 1;
  } catch (const PlanError& e) {
    rethrow_in_case(e, c);
  }
  return r;
}

}  // namespace exasim::validate
