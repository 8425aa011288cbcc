#include "models/collective/expert_all_to_all.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace exasim::models {

namespace {

using K = ExpertAllToAllKernel;
using Ph = ExpertAllToAllPhase;
using F = ExpertPayload;

}  // namespace

std::string_view expert_all_to_all_kernel_name(ExpertAllToAllKernel k) {
  switch (k) {
    case K::kDeepEpNormal: return "deepep-normal";
    case K::kDeepEpLowLatency: return "deepep-ll";
    case K::kNvlinkTwoSided: return "nvlink-two-sided";
    case K::kNvlinkOneSided: return "nvlink-one-sided";
  }
  return "?";
}

std::optional<ExpertAllToAllKernel> parse_expert_all_to_all_kernel(std::string_view name) {
  for (const K k : {K::kDeepEpNormal, K::kDeepEpLowLatency, K::kNvlinkTwoSided, K::kNvlinkOneSided})
    if (name == expert_all_to_all_kernel_name(k)) return k;
  return std::nullopt;
}

std::string_view expert_all_to_all_phase_name(ExpertAllToAllPhase p) {
  return p == Ph::kPrepare ? "prepare" : p == Ph::kDispatch ? "dispatch" : "combine";
}

std::string_view expert_payload_name(ExpertPayload f) { return f == F::kBf16 ? "bf16" : f == F::kFp8 ? "fp8" : "nvfp4"; }

std::optional<ExpertPayload> parse_expert_payload(std::string_view name) {
  for (const F f : {F::kBf16, F::kFp8, F::kNvfp4})
    if (name == expert_payload_name(f)) return f;
  return std::nullopt;
}

bool is_deepep(ExpertAllToAllKernel k) { return k == K::kDeepEpNormal || k == K::kDeepEpLowLatency; }

const std::vector<ExpertAllToAllKey>& expert_all_to_all_keys() {
  static const std::vector<ExpertAllToAllKey> kKeys = [] {
    std::vector<ExpertAllToAllKey> out;
    for (const K k : {K::kDeepEpNormal, K::kDeepEpLowLatency}) {
      out.push_back({k, Ph::kDispatch, F::kFp8});
      out.push_back({k, Ph::kCombine, F::kBf16});
    }
    for (const K k : {K::kNvlinkTwoSided, K::kNvlinkOneSided}) {
      if (k == K::kNvlinkTwoSided) out.push_back({k, Ph::kPrepare, F::kBf16});
      for (const F f : {F::kBf16, F::kFp8, F::kNvfp4}) out.push_back({k, Ph::kDispatch, f});
      for (const F f : {F::kBf16, F::kNvfp4}) out.push_back({k, Ph::kCombine, f});
    }
    return out;
  }();
  return kKeys;
}

std::string expert_all_to_all_key_name(const ExpertAllToAllKey& k) {
  std::string name(expert_all_to_all_kernel_name(k.kernel));
  std::replace(name.begin(), name.end(), '-', '_');
  name += "_" + std::string(expert_all_to_all_phase_name(k.phase));
  if (!is_deepep(k.kernel) && k.phase != Ph::kPrepare) name += "_" + std::string(expert_payload_name(k.payload));
  return name;
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
  switch (k) {
    case K::kDeepEpNormal: return x.tokens * expected_destination_ranks(x.experts, x.topk, x.ranks);
    case K::kDeepEpLowLatency: return x.tokens * x.topk;
    case K::kNvlinkTwoSided:
    case K::kNvlinkOneSided:
      return x.tokens * expected_destination_ranks(x.experts, x.topk, x.ranks) * (x.ranks - 1) / x.ranks;
  }
  return 0;
}

double expert_payload_bytes(ExpertPayload f, int hidden) {
  switch (f) {
    case F::kBf16: return 2.0 * hidden;
    case F::kFp8: return hidden + 4.0 * std::ceil(hidden / 128.0);
    case F::kNvfp4: return hidden / 2.0 + std::ceil(hidden / 16.0);
  }
  return 0;
}

double expert_all_to_all_payload(const ExpertAllToAllKey& key, int hidden) {
  return key.phase == Ph::kPrepare ? 0.0 : expert_payload_bytes(key.payload, hidden);
}

double expert_all_to_all_link_bytes(const ExpertAllToAllKey& key, const ExpertExchange& x) {
  const double copies = expert_all_to_all_copies(key.kernel, x);  // the NVLink kernels': peers only
  const double leaving = is_deepep(key.kernel) ? copies * (x.ranks - 1) / x.ranks : copies;
  return leaving * expert_all_to_all_payload(key, x.hidden);
}

int expert_all_to_all_work_units(ExpertAllToAllKernel k, const ExpertExchange& x, int device_sms) {
  if (k == K::kDeepEpNormal) return x.sms;
  if (k == K::kDeepEpLowLatency) {
    if (device_sms <= 0 || x.experts <= 0) return 0;
    const int groups = (x.experts + device_sms - 1) / device_sms;  // warp groups an SM runs
    return (x.experts + groups - 1) / groups;
  }
  return 1;
}

int expert_all_to_all_senders(ExpertAllToAllKernel k, const ExpertExchange& x, int device_sms) {
  return is_deepep(k) ? expert_all_to_all_work_units(k, x, device_sms) : x.ranks - 1;
}

double expert_all_to_all_time(const ExpertAllToAllKey& key, const ExpertExchange& x, int device_sms,
                              const ExpertAllToAllCosts& c) {
  const int units = expert_all_to_all_work_units(key.kernel, x, device_sms);
  const int senders = expert_all_to_all_senders(key.kernel, x, device_sms);
  if (units <= 0 || senders <= 0 || x.tokens < 0 || x.hidden <= 0)
    throw std::invalid_argument("expert all-to-all: malformed exchange");
  const double copies = expert_all_to_all_copies(key.kernel, x);
  const double row_bytes = 2.0 * x.hidden;
  const double work = x.tokens * c.token_s + copies * c.copy_s +
                      (c.token_bandwidth > 0 ? x.tokens * row_bytes / c.token_bandwidth : 0.0);
  double t = c.floor_s + x.experts * c.expert_s + work / units;
  if (c.row_bandwidth > 0) t += expert_all_to_all_payload(key, x.hidden) / c.row_bandwidth;
  const double payload = expert_all_to_all_link_bytes(key, x);
  if (payload > 0) {
    if (!(c.unit_bandwidth > 0 && c.link_bandwidth > 0))
      throw std::invalid_argument("expert all-to-all: a phase moving rows needs its rates");
    t += payload / std::min(senders * c.unit_bandwidth, c.link_bandwidth);
  }
  return t;
}

}  // namespace exasim::models
