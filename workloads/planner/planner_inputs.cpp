#include "workloads/planner/planner_inputs.hpp"

#include "hw/error.hpp"
#include "topologies/topology.hpp"

namespace exasim::workloads::planner {

double switch_port_gbps(const topologies::Cluster& cluster) {
  if (!cluster.inter) return 0;
  const topologies::Topology t = topologies::build_topology(cluster);
  double gbps = 0;
  for (std::uint32_t id = 0; id < t.link_count(); ++id) {
    const topologies::LinkInfo& link = t.link(id);
    if (link.kind != topologies::LinkKind::kNetwork) continue;
    const auto [a, b] = t.ends(id);
    const int switch_ends = (t.vertex(a).kind == topologies::VertexKind::kSwitch) + (t.vertex(b).kind == topologies::VertexKind::kSwitch);
    gbps += switch_ends * link.bandwidth * 8 / 1e9;  // bandwidth covers all `count` parallel ports
  }
  return gbps;
}

PlannerInputs PlannerInputs::from(const Scenario& s) {
  if (!s.training) s.root.fail("plan search needs a training: section", "see configs/scenarios/ for examples");
  PlannerInputs in;
  in.scenario = s;
  in.model = s.model;
  in.base = *s.training;
  in.cluster = s.cluster;
  in.calibration = s.calibration;
  in.network = s.simulation.network;
  in.ranks = {s.simulation.all_ranks, s.simulation.stragglers};
  in.cost = s.cost;
  in.power = models::read_power_config(s.root["power"]);
  in.space = read_plan_space(s.root["plan_space"]);
  in.switch_port_gbps = planner::switch_port_gbps(s.cluster);
  if (s.reliability) in.reliability = reliability::job_costs(*s.reliability, s.cluster, s.model, *s.training);
  return in;
}

}  // namespace exasim::workloads::planner
