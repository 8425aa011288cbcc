// Power over a simulated timeline: energy is the integral of the power trace, recomputed here
// by brute force (every task active at each instant); a power cap is never exceeded and costs
// throughput; a GPU that does nothing draws its idle power.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <set>

#include "models/collective/collective.hpp"
#include "planner_fixture.hpp"
#include "sim/net/collective_plan.hpp"
#include "workloads/planner/plan_evaluation.hpp"
#include "workloads/planner/timeline_power.hpp"

using namespace exasim;
using namespace exasim::workloads;
using namespace exasim::workloads::planner;

namespace {

// Power of `device` at time t: idle + the running kernel's dynamic power + link power of the
// communications in flight (capped at the links' full rate), from the tasks alone.
double power_at(const TrainingResult& r, const hw::GpuSpec& gpu, DType dt, sim::DeviceId device, double t) {
  const auto& g = r.graph->graph;
  const auto split = models::power_split(gpu);
  double watts = gpu.idle_power_w, link = 0;
  for (sim::TaskId id = 0; id < g.task_count(); ++id) {
    const auto& task = g.task(id);
    const auto rec = (*r.timeline)[id];
    if (g.streams()[task.stream].device != device || !(rec.start <= t && t < rec.end)) continue;
    const double d = rec.end - rec.start;
    if (task.kind == sim::TaskKind::kCompute) {
      watts += task_dynamic_w(task, gpu, dt);  // the kernel at the default power limit (TDP)
    } else if (task.comm_op != sim::kNone) {
      const auto& op = r.graph->comm_ops[task.comm_op];
      link += op.bytes * models::bus_factor(sim::to_collective(op.kind), static_cast<int>(op.ranks.size())) / (d * gpu.scaleup_bandwidth);
    }
  }
  return watts + split.link_w * std::min(1.0, link);
}

// Energy of `device` by brute force: power at the middle of every interval between task
// boundaries, times its length.
double brute_energy(const TrainingResult& r, const hw::GpuSpec& gpu, DType dt, sim::DeviceId device, double& peak) {
  std::set<double> cuts = {0.0, r.iteration_time_s};
  const auto& g = r.graph->graph;
  for (sim::TaskId id = 0; id < g.task_count(); ++id)
    if (g.streams()[g.task(id).stream].device == device) cuts.insert({(*r.timeline)[id].start, (*r.timeline)[id].end});
  double energy = 0, prev = 0;
  peak = 0;
  for (const double c : cuts) {
    if (c > prev) {
      const double w = power_at(r, gpu, dt, device, 0.5 * (prev + c));
      energy += w * (c - prev);
      peak = std::max(peak, w);
    }
    prev = c;
  }
  return energy;
}

}  // namespace

TEST_CASE("energy is the integral of power over the timeline") {
  const Scenario s = testing::scenario_from_yaml(testing::small_gpt_yaml());
  const PlannerInputs in = PlannerInputs::from(s);
  const TrainingPlan plan(in.model, *s.training, 16, 8);
  const PlanEvaluation e = evaluate_plan(in, plan, 0);
  const TrainingResult& r = e.result;
  const auto devices = timeline_power(r.graph->graph, r.graph->comm_ops, *r.timeline, in.cluster.gpu, in.base.precision, r.iteration_time_s);
  REQUIRE(devices.size() == 2);  // one simulated GPU per pipeline stage
  double total = 0;
  for (sim::DeviceId d = 0; d < devices.size(); ++d) {
    double peak = 0;
    const double brute = brute_energy(r, in.cluster.gpu, in.base.precision, d, peak);
    CHECK(devices[d].energy_j == exasim::testing::approx(brute).epsilon(1e-9));
    CHECK(devices[d].peak_w == exasim::testing::approx(peak).epsilon(1e-9));
    // The trace covers the iteration without gaps and sums to the energy.
    double sum = 0, at = 0;
    for (const PowerSegment& seg : devices[d].trace) {
      CHECK(seg.begin == exasim::testing::approx(at));
      sum += seg.watts * (seg.end - seg.begin);
      at = seg.end;
    }
    CHECK(at == exasim::testing::approx(r.iteration_time_s));
    CHECK(sum == exasim::testing::approx(devices[d].energy_j).epsilon(1e-12));
    total += devices[d].energy_j;
  }
  // Average GPU power as reported: energy over stages and time.
  CHECK(r.gpu_power_w == exasim::testing::approx(total / (2 * r.iteration_time_s)));
  CHECK(r.gpu_power_w > in.cluster.gpu.idle_power_w);
  CHECK(r.gpu_power_w < in.cluster.gpu.tdp_w);
  CHECK(e.power.peak_gpu_w <= in.cluster.gpu.tdp_w + 1e-9);  // the default limit
  // Cluster energy per iteration: IT power (GPUs, nodes, switches) x time.
  CHECK(r.energy_per_iteration_j == exasim::testing::approx(r.power_avg_w * r.iteration_time_s));
  CHECK(r.power_avg_w == exasim::testing::approx(16 * r.gpu_power_w + 2 * in.cluster.node_power_other_w + e.power.cluster.switches_w));
}

TEST_CASE("power never exceeds the cap, and the cap costs throughput") {
  const Scenario s = testing::scenario_from_yaml(testing::small_gpt_yaml());
  const PlannerInputs in = PlannerInputs::from(s);
  const TrainingPlan plan(in.model, *s.training, 16, 8);
  const PlanEvaluation free = evaluate_plan(in, plan, 0);
  double last_time = free.result.iteration_time_s;
  const double peak = free.power.peak_gpu_w;
  for (const double cap : {0.95 * peak, 0.85 * peak, 0.75 * peak, 0.7 * peak}) {
    INFO("cap ", cap, " W");
    const PlanEvaluation e = evaluate_plan(in, plan, cap);
    CHECK(e.power.peak_gpu_w <= cap + 1e-9);
    CHECK(e.result.gpu_power_w <= cap);
    CHECK(e.result.iteration_time_s >= last_time);
    CHECK(e.power.mean_clock < 1);
    last_time = e.result.iteration_time_s;
  }
  CHECK(last_time > free.result.iteration_time_s * 1.05);
  CHECK_THROWS_AS(evaluate_plan(in, plan, 100), ConfigError);  // below what the lowest clock needs
}

TEST_CASE("a GPU with nothing to do draws its idle power") {
  const hw::GpuSpec gpu = testing::planner_catalog().gpu(std::string("H100-SXM5-80GB"));
  sim::ExecGraph g;
  g.add_device("idle");
  const sim::Timeline tl(0);
  const auto p = timeline_power(g, {}, tl, gpu, DType::kBf16, 2.0);
  REQUIRE(p.size() == 1);
  CHECK(p[0].energy_j == exasim::testing::approx(2.0 * gpu.idle_power_w));
  CHECK(p[0].average_w == exasim::testing::approx(gpu.idle_power_w));
  CHECK(p[0].peak_w == exasim::testing::approx(gpu.idle_power_w));
}
