#pragma once
// One SimGrid run's engine and platform: the topology's channels as SimGrid links (achieved
// bandwidth, latency, one link per direction), the flow endpoints as hosts of a full-routing
// zone, and the exact route of every endpoint pair the run needs (so SimGrid follows exasim's
// routing, ECMP choice included). Only the flow backend includes this header.
#include <simgrid/s4u.hpp>

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/net/network_fabric.hpp"

namespace exasim::sim {

class SimgridPlatform {
 public:
  // `flow_model`: LV08 or CM02 (see flow_network.hpp).
  SimgridPlatform(NetworkFabric& fabric, const std::string& flow_model, const std::vector<Vertex>& endpoints,
                  const std::vector<std::pair<Vertex, Vertex>>& pairs);
  SimgridPlatform(const SimgridPlatform&) = delete;
  SimgridPlatform& operator=(const SimgridPlatform&) = delete;

  simgrid::s4u::Engine& engine() { return *engine_; }
  simgrid::s4u::Host* host(Vertex v) const { return hosts_.at(v); }
  simgrid::s4u::Host* driver_host() const { return driver_; }

 private:
  void configure(const std::string& flow_model);

  std::vector<std::string> args_;
  std::vector<char*> argv_;
  int argc_ = 0;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  std::unordered_map<Vertex, simgrid::s4u::Host*> hosts_;
  simgrid::s4u::Host* driver_ = nullptr;
};

}  // namespace exasim::sim
