#include "workloads/planner/power_cap.hpp"

#include <algorithm>

#include "hw/error.hpp"
#include "hw/units.hpp"
#include "workloads/planner/timeline_power.hpp"

namespace exasim::workloads::planner {

CappedGraph apply_power_cap(const sim::ExecGraph& g, const hw::GpuSpec& gpu, DType precision, double cap_w,
                            const models::DvfsCurve& curve) {
  const double limit = cap_w > 0 ? std::min(cap_w, gpu.tdp_w) : gpu.tdp_w;
  const double floor = models::power_cap_floor_w(gpu, curve);
  if (limit < floor) {
    throw ConfigError("power cap " + units::format(limit, units::Dimension::kPower, 4) + " is below " +
                          units::format(floor, units::Dimension::kPower, 4) + ", what " + gpu.name +
                          " draws at its lowest clock with HBM and links busy",
                      {"", 0, "power.gpu_cap"}, "raise the cap");
  }
  const double reserve = models::power_split(gpu).link_w;  // links keep their full power in reserve
  CappedGraph out;
  out.dynamic_w.assign(g.task_count(), 0.0);
  std::vector<double> duration(g.task_count());
  double weighted = 0, total = 0;
  for (sim::TaskId id = 0; id < g.task_count(); ++id) {
    const sim::Task& t = g.task(id);
    duration[id] = t.duration;
    if (t.kind != sim::TaskKind::kCompute || t.duration <= 0) continue;
    const models::UnitActivity a = task_activity(t, gpu, precision);
    const double bound = a.matrix / std::max(1e-12, a.matrix + a.hbm);
    const models::CappedKernel k = models::limit_kernel(gpu, {a, bound}, limit, reserve, curve);
    out.dynamic_w[id] = k.power_w - gpu.idle_power_w;
    duration[id] = t.duration * k.time_factor;
    out.stretched = out.stretched || k.time_factor > 1;
    weighted += k.clock.frequency * duration[id];
    total += duration[id];
  }
  out.mean_clock = total > 0 ? weighted / total : 1;
  if (!out.stretched) return out;
  for (const sim::Device& d : g.devices()) out.graph.add_device(d.name);
  for (const sim::Stream& st : g.streams()) out.graph.add_stream(st.device, st.kind, st.name);
  out.graph.reserve(g.task_count(), g.edge_count());
  out.graph.share_tables(g);
  for (sim::TaskId id = 0; id < g.task_count(); ++id) {
    const sim::Task& t = g.task(id);
    if (t.stream == sim::kNone) {
      out.graph.add_barrier(g.label_of(id));
    } else {
      out.graph.add_task_like(t, t.stream, duration[id], t.comm_op);
    }
  }
  for (std::size_t e = 0; e < g.edge_count(); ++e) out.graph.add_dependency(g.edge_from()[e], g.edge_to()[e]);
  return out;
}

}  // namespace exasim::workloads::planner
