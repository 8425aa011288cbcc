#pragma once
// How a run's network is simulated: which backend, which sharing model for flows, which
// collective algorithms, and whether an op stands for its symmetric copies.
#include <string>

#include "models/collective/collective.hpp"

namespace exasim::sim {

// LV08's sharing weight: 20537 B over each link's bandwidth added to a flow's sharing penalty
// (SimGrid 3.32 network/weight-S default for LV08); CM02 penalises flows by route latency only.
inline double flow_weight_s(const std::string& flow_model) { return flow_model == "LV08" ? 20537.0 : 0.0; }

struct NetworkOptions {
  std::string backend = "analytical";  // sim/net/network_registry.hpp: analytical | flow
  // Flow backend: SimGrid's LV08 max-min sharing (flows weighted by route latency and
  // 20537 B / bandwidth per link, as TCP's RTT unfairness) or CM02 (weighted by latency only).
  std::string flow_model = "LV08";
  models::AlgorithmChoice algorithms;  // kAuto: the tuner picks by size and group shape
  // Symmetry (DESIGN.md): an op of the one simulated GPU stands for the same op of every GPU
  // that does identical work; with this on, the network also carries those copies (the op's
  // ranks shifted to the other GPU positions of their nodes), so they share NICs and switches.
  bool symmetric_copies = false;
  // Flow backend: when an op has had the network to itself for a whole round, the identical
  // rounds left in its phase take the same time until something else can start (the engine's
  // next event), so they are credited instead of re-simulated. Exact (max-min sharing is
  // time-invariant; tests/network compare single ops and contended training iterations with
  // it off to 1e-9); off only to measure.
  bool fast_forward = true;
};

}  // namespace exasim::sim
