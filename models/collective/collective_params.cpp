#include "models/collective/collective_params.hpp"

#include <stdexcept>
#include <string>

namespace exasim::models {

namespace {

using config::Node;
using units::Dimension;

}  // namespace

std::string_view protocol_name(Protocol p) {
  switch (p) {
    case Protocol::kSimple: return "Simple";
    case Protocol::kLL128: return "LL128";
    case Protocol::kLL: return "LL";
  }
  return "?";
}

double protocol_bandwidth_fraction(Protocol p) {
  switch (p) {
    case Protocol::kSimple: return 1;
    case Protocol::kLL128: return 120.0 / 128.0;
    case Protocol::kLL: return 0.5;
  }
  return 1;
}

const std::vector<CollectiveParamSlot>& collective_param_slots() {
  using P = CollectiveParams;
  using K = CollectiveParamKind;
  // Ranges: efficiencies of a link class from a quarter to all of its datasheet rate; step
  // latencies from NVLink's ~0.1 us hardware hop to a congested network step; per-call costs
  // from a bare kernel launch to a Python-timed call.
  static const std::vector<CollectiveParamSlot> kSlots = {
      {"intra_efficiency", &P::intra_efficiency, K::kEfficiency, 0.25, 1.0},
      {"xgmi_efficiency", &P::xgmi_efficiency, K::kEfficiency, 0.25, 1.0},
      {"pcie_efficiency", &P::pcie_efficiency, K::kEfficiency, 0.25, 1.0},
      {"inter_efficiency", &P::inter_efficiency, K::kEfficiency, 0.25, 1.0},
      {"reduction_efficiency", &P::reduction_efficiency, K::kEfficiency, 0.25, 1.0},
      {"nvls_efficiency", &P::nvls_efficiency, K::kEfficiency, 0.25, 1.0},
      // At most the payload share of the protocol's lines (protocol_bandwidth_fraction).
      {"ll128_efficiency", &P::ll128_efficiency, K::kEfficiency, 0.1, protocol_bandwidth_fraction(Protocol::kLL128)},
      {"ll_efficiency", &P::ll_efficiency, K::kEfficiency, 0.1, protocol_bandwidth_fraction(Protocol::kLL)},
      {"pipeline_fill_rounds", &P::pipeline_fill_rounds, K::kRounds, 0.01, 4},
      {"step_overhead", &P::step_overhead_s, K::kTime, 0.1e-6, 30e-6},
      {"inter_step_overhead", &P::inter_step_overhead_s, K::kTime, 0.5e-6, 30e-6},
      {"ll_step_overhead", &P::ll_step_overhead_s, K::kTime, 0.05e-6, 10e-6},
      {"ll_inter_step_overhead", &P::ll_inter_step_overhead_s, K::kTime, 0.5e-6, 30e-6},
      {"ll128_step_overhead", &P::ll128_step_overhead_s, K::kTime, 0.05e-6, 10e-6},
      {"ll128_inter_step_overhead", &P::ll128_inter_step_overhead_s, K::kTime, 0.5e-6, 30e-6},
      {"simple_base_latency", &P::simple_base_latency_s, K::kTime, 0.1e-6, 100e-6},
      {"ll128_base_latency", &P::ll128_base_latency_s, K::kTime, 0.1e-6, 100e-6},
      {"launch_overhead", &P::launch_overhead_s, K::kTime, 0.5e-6, 60e-6},
      {"p2p_launch_overhead", &P::p2p_launch_overhead_s, K::kTime, 0.5e-6, 60e-6},
      {"custom_all_reduce_efficiency", &P::custom_all_reduce_efficiency, K::kEfficiency, 0.05, 1.0},
      {"custom_all_reduce_overhead", &P::custom_all_reduce_overhead_s, K::kTime, 0.5e-6, 60e-6},
      {"collective_sms", &P::collective_sms, K::kCount, 0, 160},
      {"p2p_sms", &P::p2p_sms, K::kCount, 0, 160},
      {"userbuffers_reduce_scatter_sms", &P::userbuffers_reduce_scatter_sms, K::kCount, 0, 160},
      {"userbuffers_all_gather_sms", &P::userbuffers_all_gather_sms, K::kCount, 0, 160},
  };
  return kSlots;
}

const CollectiveParamSlot& collective_param_slot(std::string_view name) {
  for (const CollectiveParamSlot& s : collective_param_slots())
    if (name == s.name) return s;
  throw std::out_of_range("no collective parameter " + std::string(name));
}

namespace {

// One phase's map: its constants with unit and a plausible range (a GPU's per-call costs below a
// millisecond, per-item costs below 100 us, rates up to 10 TB/s); the rates are required where
// the phase moves rows.
ExpertAllToAllCosts read_expert_all_to_all_costs(const Node& m, bool moves_rows) {
  if (!m.is_map())
    m.fail("expected a map of the phase's constants",
           "{floor: 26 us, expert_cost: 3 ns, token_time: 300 ns, copy_time: 30 ns, token_bandwidth: 80 GB/s, "
           "unit_bandwidth: 23 GB/s, link_bandwidth: 430 GB/s}");
  m.check_keys({"floor", "expert_cost", "token_time", "copy_time", "token_bandwidth", "row_bandwidth", "unit_bandwidth",
                "link_bandwidth"});
  auto time = [&](const char* key, double most) {
    if (!m.has(key)) m.fail(std::string("missing ") + key, "every constant of the phase, 0 where it has none");
    const Node v = m[key];
    const double t = v.as_nonnegative_quantity(Dimension::kTime);
    if (t > most) v.fail(std::string(key) + " is implausibly large", "at most " + units::format(most, Dimension::kTime));
    return t;
  };
  auto rate = [&](const char* key, bool required) {
    if (!m.has(key)) {
      if (required) m.fail(std::string("missing ") + key, "a phase that moves rows needs its rates");
      return 0.0;
    }
    const Node v = m[key];
    const double b = required ? v.as_positive_quantity(Dimension::kBandwidth) : v.as_nonnegative_quantity(Dimension::kBandwidth);
    if (b > 10e12) v.fail(std::string(key) + " is implausibly large", "a GPU moves at most a few TB/s");
    return b;
  };
  ExpertAllToAllCosts c;
  c.floor_s = time("floor", 1e-3);
  c.expert_s = time("expert_cost", 1e-5);
  c.token_s = time("token_time", 1e-4);
  c.copy_s = time("copy_time", 1e-4);
  c.token_bandwidth = rate("token_bandwidth", false);
  c.row_bandwidth = rate("row_bandwidth", false);  // optional: files before it have none
  c.unit_bandwidth = rate("unit_bandwidth", moves_rows);
  c.link_bandwidth = rate("link_bandwidth", moves_rows);
  return c;
}

}  // namespace

void apply_collective_params(CollectiveParams& p, const Node& n) {
  std::vector<std::string> keys;
  for (const CollectiveParamSlot& s : collective_param_slots()) keys.emplace_back(s.name);
  for (const ExpertAllToAllKey& k : expert_all_to_all_keys()) keys.push_back(expert_all_to_all_key_name(k));
  n.check_keys(keys);
  for (const ExpertAllToAllKey& k : expert_all_to_all_keys())
    if (const std::string name = expert_all_to_all_key_name(k); n.has(name))
      p.expert_all_to_all[k] = read_expert_all_to_all_costs(n[name], k.phase != ExpertAllToAllPhase::kPrepare);
  for (const CollectiveParamSlot& s : collective_param_slots()) {
    if (!n.has(s.name)) continue;
    const Node v = n[s.name];
    switch (s.kind) {
      case CollectiveParamKind::kEfficiency: {
        const double e = v.as_efficiency();
        if (e > s.upper)  // the low-latency protocols: their lines' payload share
          v.fail("a protocol reaches at most the payload share of its lines",
                 std::string(s.name) + " at most " + units::format(s.upper, Dimension::kNone) +
                     " (LL carries 4 of 8 bytes, LL128 120 of 128)");
        p.*s.field = e;
        break;
      }
      case CollectiveParamKind::kTime: p.*s.field = v.as_nonnegative_quantity(Dimension::kTime); break;
      case CollectiveParamKind::kRounds: {
        const double r = v.as_number();
        if (!(r >= 0 && r <= 16))
          v.fail("pipeline fill must be 0 to 16 rounds", "one peer's share of a round a phase takes beyond its rounds, e.g. 0.5");
        p.*s.field = r;
        break;
      }
      case CollectiveParamKind::kCount: {
        const double c = v.as_number();
        if (!(c >= 0)) v.fail("an SM count must be >= 0", "the GPU's SMs a communication holds while it runs, e.g. 16");
        p.*s.field = c;
        break;
      }
    }
  }
}

}  // namespace exasim::models
