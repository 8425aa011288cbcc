#include "workloads/planner/timeline_power.hpp"

#include <algorithm>

#include "models/collective/collective.hpp"
#include "models/power/dvfs.hpp"
#include "sim/net/collective_plan.hpp"

namespace exasim::workloads::planner {

models::UnitActivity task_activity(const sim::Task& t, const hw::GpuSpec& gpu, DType precision) {
  models::UnitActivity a;
  if (t.duration <= 0) return a;
  a.matrix = std::min(1.0, t.flops / (t.duration * gpu.peak(precision)));
  a.hbm = std::min(1.0, t.bytes / (t.duration * gpu.hbm_bandwidth));
  a.vector = 1;
  return a;
}

double task_dynamic_w(const sim::Task& t, const hw::GpuSpec& gpu, DType precision) {
  if (t.kind != sim::TaskKind::kCompute || t.duration <= 0) return 0;
  const models::UnitActivity a = task_activity(t, gpu, precision);
  const double bound = a.matrix / std::max(1e-12, a.matrix + a.hbm);
  return models::limit_kernel(gpu, {a, bound}, gpu.tdp_w, models::power_split(gpu).link_w).power_w - gpu.idle_power_w;
}

double wire_bytes(const sim::CommOp& op) {
  return op.bytes * models::bus_factor(sim::to_collective(op.kind), static_cast<int>(op.ranks.size()));
}

namespace {

struct Event {
  double time = 0;
  double compute_w = 0;  // change of the compute stream's dynamic power
  double link = 0;       // change of link activity
  double matrix = 0, vector = 0, hbm = 0;  // changes of unit activity (for averages)
};

}  // namespace

std::vector<DevicePower> timeline_power(const sim::ExecGraph& g, const std::vector<sim::CommOp>& ops, const sim::Timeline& tl,
                                        const hw::GpuSpec& gpu, DType precision, double horizon,
                                        const std::vector<double>& dynamic_w, std::size_t devices) {
  const models::GpuPowerSplit split = models::power_split(gpu);
  const std::size_t n = devices > 0 ? std::min(devices, g.devices().size()) : g.devices().size();
  std::vector<std::vector<Event>> events(n);
  for (sim::TaskId id = 0; id < g.task_count(); ++id) {
    const sim::Task& t = g.task(id);
    const double begin = tl[id].start, end = tl[id].end;
    if (end <= begin || t.stream == sim::kNone) continue;
    const sim::DeviceId device = g.streams()[t.stream].device;
    if (device >= n) continue;
    auto& ev = events[device];
    Event e{begin};
    if (t.kind == sim::TaskKind::kCompute) {
      e.compute_w = dynamic_w.empty() ? task_dynamic_w(t, gpu, precision) : dynamic_w[id];
      sim::Task actual = t;
      actual.duration = end - begin;  // activity over the time it really took
      const models::UnitActivity a = task_activity(actual, gpu, precision);
      e.matrix = a.matrix, e.vector = a.vector, e.hbm = a.hbm;
    } else if (t.comm_op != sim::kNone && gpu.scaleup_bandwidth > 0) {
      e.link = wire_bytes(ops[t.comm_op]) / ((end - begin) * gpu.scaleup_bandwidth);
    }
    Event off{end, -e.compute_w, -e.link, -e.matrix, -e.vector, -e.hbm};
    ev.push_back(e);
    ev.push_back(off);
  }
  std::vector<DevicePower> out;
  for (auto& ev : events) {
    // Order by time; several events at one instant leave no interval between them.
    std::stable_sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) { return a.time < b.time; });
    DevicePower d;
    double t = 0, compute = 0, link = 0, matrix = 0, vector = 0, hbm = 0, linkavg = 0;
    auto emit = [&](double until) {
      if (until <= t) return;
      const double w = gpu.idle_power_w + std::max(0.0, compute) + split.link_w * std::clamp(link, 0.0, 1.0);
      d.trace.push_back({t, until, w});
      d.energy_j += w * (until - t);
      d.peak_w = std::max(d.peak_w, w);
      d.activity.matrix += matrix * (until - t);
      d.activity.vector += vector * (until - t);
      d.activity.hbm += hbm * (until - t);
      linkavg += std::clamp(link, 0.0, 1.0) * (until - t);
      t = until;
    };
    for (const Event& e : ev) {
      emit(std::min(e.time, horizon));
      compute += e.compute_w, link += e.link, matrix += e.matrix, vector += e.vector, hbm += e.hbm;
    }
    emit(horizon);
    if (horizon > 0) {
      d.average_w = d.energy_j / horizon;
      d.activity.matrix /= horizon, d.activity.vector /= horizon, d.activity.hbm /= horizon;
      d.activity.link = linkavg / horizon;
    }
    out.push_back(std::move(d));
  }
  return out;
}

double average_gpu_power_w(const sim::ExecGraph& graph, const std::vector<sim::CommOp>& ops, const sim::Timeline& timeline,
                           const hw::GpuSpec& gpu, DType precision, double horizon) {
  const auto devices = timeline_power(graph, ops, timeline, gpu, precision, horizon);
  if (devices.empty() || horizon <= 0) return gpu.idle_power_w;
  double energy = 0;
  for (const DevicePower& d : devices) energy += d.energy_j;
  return energy / (static_cast<double>(devices.size()) * horizon);
}

}  // namespace exasim::workloads::planner
