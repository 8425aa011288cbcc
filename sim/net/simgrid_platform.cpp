#include "sim/net/simgrid_platform.hpp"

#include <xbt/log.h>

#include <xbt/config.hpp>

#include "hw/error.hpp"
#include "sim/net/network_options.hpp"

namespace exasim::sim {

namespace sg4 = simgrid::s4u;

namespace {


}  // namespace

void SimgridPlatform::configure(const std::string& flow_model) {
  if (flow_model != "LV08" && flow_model != "CM02") {
    throw ConfigError("unknown flow model '" + flow_model + "'", {}, "use LV08 or CM02");
  }
  // SimGrid's configuration outlives its engines and refuses a model change once a platform was
  // built, even to the same value: set the model class and its update mode only the first time.
  if (simgrid::config::get_value<std::string>("network/model") != "CM02") sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic", false);   // RDMA and NVLink carry no TCP acks
  sg4::Engine::set_config("network/latency-factor", 1.0);   // latencies are calibrated
  sg4::Engine::set_config("network/bandwidth-factor", 1.0); // efficiencies are calibrated
  sg4::Engine::set_config("network/TCP-gamma", 0.0);        // no TCP window bound
  sg4::Engine::set_config("network/weight-S", flow_weight_s(flow_model));
  // Full re-solve at every event: 3.32's lazy update (the default) lets some flows finish early
  // when many of different lengths share links (a 92-flow tree pass on a 4x4 torus ended in
  // 570 us where its busiest link needs 712 us; with Full, 712 us as computed by hand).
  if (simgrid::config::get_value<std::string>("network/optim") != "Full") sg4::Engine::set_config("network/optim:Full");
}

SimgridPlatform::SimgridPlatform(NetworkFabric& fabric, const std::string& flow_model,
                                 const std::vector<Vertex>& endpoints,
                                 const std::vector<std::pair<Vertex, Vertex>>& pairs)
    : args_{"exasim", "--log=root.thresh:critical"} {
  for (std::string& a : args_) argv_.push_back(a.data());
  argv_.push_back(nullptr);
  argc_ = static_cast<int>(args_.size());
  engine_ = std::make_unique<sg4::Engine>(&argc_, argv_.data());
  configure(flow_model);
  const topologies::Topology& t = fabric.topology();
  auto* zone = sg4::create_full_zone("exasim-network");
  for (Vertex v : endpoints) hosts_.emplace(v, zone->create_host(t.vertex(v).name, 1e9)->seal());
  driver_ = endpoints.empty() ? zone->create_host("exasim-driver", 1e9)->seal() : hosts_.at(endpoints.front());
  std::unordered_map<ChannelId, sg4::Link*> links;
  std::vector<sg4::LinkInRoute> route;
  for (const auto& [a, b] : pairs) {
    route.clear();
    for (ChannelId c : fabric.route(a, b)) {
      auto [it, fresh] = links.emplace(c, nullptr);
      if (fresh) {
        it->second = zone->create_link("ch" + std::to_string(c), fabric.capacity(c));
        it->second->set_latency(fabric.latency(c))->seal();
      }
      route.emplace_back(it->second);
    }
    zone->add_route(hosts_.at(a)->get_netpoint(), hosts_.at(b)->get_netpoint(), nullptr, nullptr, route, false);
  }
  zone->seal();
}

}  // namespace exasim::sim
