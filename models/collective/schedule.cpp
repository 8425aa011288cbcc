#include "models/collective/schedule.hpp"

namespace exasim::models {

long Schedule::rounds() const {
  long n = 0;
  for (const Phase& p : phases) n += p.repeat;
  return n;
}

long Schedule::latency_steps() const {
  long n = 0;
  for (const Phase& p : phases) n += static_cast<long>(p.repeat) * p.latency_steps;
  return n;
}

void PhaseBuilder::add(int src, int dst, double fraction) {
  if (src == dst || !(fraction > 0)) return;
  const long long key = (static_cast<long long>(src) << 32) ^ static_cast<unsigned>(dst);
  auto [it, fresh] = index_.emplace(key, phase_.transfers.size());
  if (fresh) phase_.transfers.push_back({src, dst, fraction});
  else phase_.transfers[it->second].fraction += fraction;
}

Phase PhaseBuilder::take(int repeat, int latency_steps, double wire_factor) {
  Phase out = std::move(phase_);
  out.repeat = repeat;
  out.latency_steps = latency_steps;
  out.wire_factor = wire_factor;
  phase_ = Phase{};
  index_.clear();
  return out;
}

}  // namespace exasim::models
