#include "workloads/training/training_report.hpp"

namespace exasim::workloads {

namespace {

nlohmann::json plan_json(const TrainingPlan& plan) {
  const TrainingConfig& c = plan.config();
  const Parallelism& p = c.parallelism;
  return {{"parallelism",
           {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"cp", p.cp}, {"ep", p.ep}, {"vpp", p.vpp},
            {"sequence_parallel", p.sequence_parallel}}},
          {"pipeline_schedule", c.pipeline_schedule},
          {"micro_batch", c.micro_batch},
          {"micro_batches_per_iteration", plan.micro_batches()},
          {"global_batch", c.global_batch},
          {"seq_len", c.seq_len},
          {"zero", c.zero},
          {"recompute", c.recompute == models::Recompute::kNone       ? "none"
                        : c.recompute == models::Recompute::kSelective ? "selective"
                                                                       : "full"},
          {"recompute_layers", c.recompute_layers},
          {"offload", c.offload}};
}

nlohmann::json memory_json(const TrainingResult& r) {
  const StageMemory& p = r.memory.peak();
  nlohmann::json stages = nlohmann::json::array();
  for (const StageMemory& s : r.memory.stages) stages.push_back(s.total());
  return {{"peak_per_gpu_bytes", p.total()},
          {"weights", p.weights},
          {"gradients", p.gradients},
          {"optimizer", p.optimizer},
          {"activations", p.activations},
          {"gathered_layers", p.gathered},
          {"communication_buffers", p.buffers},
          {"fragmentation", p.fragmentation},
          {"capacity_per_gpu_bytes", r.memory_capacity_bytes},
          {"peak_stage", r.memory.peak_stage},
          {"per_stage_bytes", stages}};
}

}  // namespace

nlohmann::json training_result_json(const Scenario& s, const TrainingPlan& plan, const TrainingResult& r) {
  const TimeBreakdown& b = r.breakdown;
  return {{"scenario", s.name},
          {"kind", "training"},
          {"model", s.model.name},
          {"gpu", s.cluster.gpu.name},
          {"gpus", s.cluster.gpu_count()},
          {"training", plan_json(plan)},
          {"iteration_time_s", r.iteration_time_s},
          {"tokens_per_s", r.tokens_per_s},
          {"samples_per_s", r.samples_per_s},
          {"tflops_per_gpu", r.tflops_per_gpu},
          {"mfu", r.mfu},
          {"hfu", r.hfu},
          {"memory", memory_json(r)},
          {"time_breakdown_s",
           {{"compute", b.compute}, {"exposed_comm", b.exposed_comm}, {"bubble", b.bubble},
            {"optimizer", b.optimizer}, {"offload", b.offload}, {"host", b.host}}},
          {"power", {{"avg_w", r.power_avg_w}, {"per_gpu_w", r.gpu_power_w}}},
          {"energy", {{"per_iteration_j", r.energy_per_iteration_j}, {"per_token_j", r.energy_per_token_j}}},
          {"cost", {{"usd_per_hour", r.cost.usd_per_hour}, {"usd_per_million_tokens", r.cost.usd_per_million_tokens}}},
          {"simulation",
           {{"fidelity", s.simulation.fidelity}, {"seed", s.simulation.seed}, {"tasks", r.tasks}, {"events", r.events},
            {"kernel_parameters", s.calibration.kernel.source},
            {"collective_parameters", s.calibration.collective.source}}}};
}

}  // namespace exasim::workloads
