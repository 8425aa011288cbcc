#include "models/collective/expert_all_to_all.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace exasim::models {

std::string_view expert_all_to_all_kernel_name(ExpertAllToAllKernel k) {
  return k == ExpertAllToAllKernel::kDeepEpNormal ? "deepep-normal" : "deepep-ll";
}

std::optional<ExpertAllToAllKernel> parse_expert_all_to_all_kernel(std::string_view name) {
  if (name == "deepep-normal") return ExpertAllToAllKernel::kDeepEpNormal;
  if (name == "deepep-ll") return ExpertAllToAllKernel::kDeepEpLowLatency;
  return std::nullopt;
}

std::string_view expert_all_to_all_phase_name(ExpertAllToAllPhase p) {
  return p == ExpertAllToAllPhase::kDispatch ? "dispatch" : "combine";
}

const ExpertAllToAllCosts& ExpertAllToAllParams::of(ExpertAllToAllKernel k, ExpertAllToAllPhase p) const {
  const bool d = p == ExpertAllToAllPhase::kDispatch;
  if (k == ExpertAllToAllKernel::kDeepEpNormal) return d ? normal_dispatch : normal_combine;
  return d ? ll_dispatch : ll_combine;
}

ExpertAllToAllCosts& ExpertAllToAllParams::of(ExpertAllToAllKernel k, ExpertAllToAllPhase p) {
  return const_cast<ExpertAllToAllCosts&>(static_cast<const ExpertAllToAllParams&>(*this).of(k, p));
}

double expected_destination_ranks(int experts, int topk, int ranks) {
  if (ranks <= 0 || experts < ranks || topk <= 0 || topk > experts)
    throw std::invalid_argument("expected_destination_ranks: need 0 < topk <= experts and ranks <= experts");
  const int per_rank = experts / ranks;
  // C(E - E/R, k) / C(E, k) = prod_{i<k} (E - E/R - i) / (E - i): the chance no expert of one rank is drawn.
  double none = 1;
  for (int i = 0; i < topk; ++i) none *= std::max(0, experts - per_rank - i) / static_cast<double>(experts - i);
  return ranks * (1 - none);
}

double expert_all_to_all_copies(ExpertAllToAllKernel k, const ExpertExchange& x) {
  return k == ExpertAllToAllKernel::kDeepEpNormal ? x.tokens * expected_destination_ranks(x.experts, x.topk, x.ranks)
                                                  : x.tokens * x.topk;
}

double expert_all_to_all_payload_bytes(ExpertAllToAllPhase p, int hidden) {
  return p == ExpertAllToAllPhase::kDispatch ? hidden + 4.0 * std::ceil(hidden / 128.0) : 2.0 * hidden;
}

int expert_all_to_all_sms(ExpertAllToAllKernel k, const ExpertExchange& x, int device_sms) {
  if (k == ExpertAllToAllKernel::kDeepEpNormal) return x.sms;
  if (device_sms <= 0 || x.experts <= 0) return 0;
  const int groups = (x.experts + device_sms - 1) / device_sms;  // warp groups a SM runs
  return (x.experts + groups - 1) / groups;
}

double expert_all_to_all_time(ExpertAllToAllKernel k, ExpertAllToAllPhase p, const ExpertExchange& x, int device_sms,
                              const ExpertAllToAllCosts& c) {
  if (!c.fitted()) throw std::invalid_argument("expert all-to-all costs not fitted");
  const int sms = expert_all_to_all_sms(k, x, device_sms);
  if (sms <= 0 || x.tokens < 0 || x.hidden <= 0) throw std::invalid_argument("expert all-to-all: malformed exchange");
  const double copies = expert_all_to_all_copies(k, x);
  const double row_bytes = 2.0 * x.hidden;
  const double per_sm = x.tokens * c.token_sm_s + copies * c.pair_sm_s +
                        (c.token_sm_bandwidth > 0 ? x.tokens * row_bytes / c.token_sm_bandwidth : 0.0);
  const double rate = std::min(sms * c.pair_sm_bandwidth, c.link_bandwidth);
  return c.floor_s + x.experts * c.expert_s + per_sm / sms + copies * expert_all_to_all_payload_bytes(p, x.hidden) / rate;
}

}  // namespace exasim::models
