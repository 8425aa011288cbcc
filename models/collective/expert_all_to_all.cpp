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

ExpertAllToAllTerms expert_all_to_all_terms(const ExpertAllToAllKey& key, const ExpertExchange& x, int device_sms) {
  const int units = expert_all_to_all_work_units(key.kernel, x, device_sms);
  ExpertAllToAllTerms t;
  t.senders = expert_all_to_all_senders(key.kernel, x, device_sms);
  if (units <= 0 || t.senders <= 0 || x.tokens < 0 || x.hidden <= 0)
    throw std::invalid_argument("expert all-to-all: malformed exchange");
  const double copies = expert_all_to_all_copies(key.kernel, x);
  const double row = expert_all_to_all_payload(key, x.hidden);
  // The copies to the GPU itself (DeepEP's) stay in its memory: (R - 1) / R of them leave.
  const double leaving = is_deepep(key.kernel) ? copies * (x.ranks - 1) / x.ranks : copies;
  const double token_row_bytes = 2.0 * x.hidden;  // the token's bf16 row, read for the cast or written by the sum
  t.linear[0] = 1;
  t.linear[1] = x.experts;
  t.linear[2] = x.tokens / units;
  t.linear[3] = copies / units;
  t.linear[4] = x.tokens * token_row_bytes / units;
  t.linear[5] = row;
  t.link_bytes = leaving * row;
  return t;
}

double expert_all_to_all_time(const ExpertAllToAllKey& key, const ExpertExchange& x, int device_sms,
                              const ExpertAllToAllCosts& c) {
  const ExpertAllToAllTerms t = expert_all_to_all_terms(key, x, device_sms);
  const double per_byte_token = c.token_bandwidth > 0 ? 1 / c.token_bandwidth : 0.0;
  const double per_byte_row = c.row_bandwidth > 0 ? 1 / c.row_bandwidth : 0.0;
  const double costs[ExpertAllToAllTerms::kLinear] = {c.floor_s, c.expert_s, c.token_s, c.copy_s, per_byte_token, per_byte_row};
  double time = 0;
  for (int i = 0; i < ExpertAllToAllTerms::kLinear; ++i) time += costs[i] * t.linear[i];
  if (t.link_bytes > 0) {
    if (!(c.unit_bandwidth > 0 && c.link_bandwidth > 0))
      throw std::invalid_argument("expert all-to-all: a phase moving rows needs its rates");
    time += t.link_bytes / std::min(t.senders * c.unit_bandwidth, c.link_bandwidth);
  }
  return time;
}

}  // namespace exasim::models
