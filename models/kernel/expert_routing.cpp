#include "models/kernel/expert_routing.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <vector>

namespace exasim::models {

std::optional<ExpertRouting> parse_expert_routing(std::string_view name) {
  if (name == "balanced") return ExpertRouting{ExpertRoutingKind::kBalanced, 0};
  if (name == "uniform") return ExpertRouting{ExpertRoutingKind::kUniform, 0};
  for (std::string_view prefix : {"power_law_", "power_law:"}) {
    if (!name.starts_with(prefix)) continue;
    const std::string_view a = name.substr(prefix.size());
    double alpha = 0;
    const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), alpha);
    if (ec != std::errc() || end != a.data() + a.size() || !(alpha > 0) || alpha > kMaxPowerLawAlpha) return std::nullopt;
    return ExpertRouting{ExpertRoutingKind::kPowerLaw, alpha};
  }
  return std::nullopt;
}

std::string expert_routing_name(const ExpertRouting& r) {
  if (r.kind == ExpertRoutingKind::kBalanced) return "balanced";
  if (r.kind == ExpertRoutingKind::kUniform) return "uniform";
  std::ostringstream s;
  s << "power_law_" << r.alpha;
  return s.str();
}

namespace {

// AIConfigurator's balanced_logits, rank 0 (experts [0, L)).
ExpertLoad balanced(std::int64_t T, int k, int E, int L) {
  const std::int64_t s = (E + k - 1) / k;
  std::vector<std::int64_t> count(static_cast<std::size_t>(L), 0);
  if (T >= s) {
    // Slot j visits experts (j s + i) mod E for i in [0, T): every expert T / E times, and the
    // T mod E experts from j s on once more.
    const std::int64_t full = T / E, rest = T % E;
    for (int j = 0; j < k; ++j) {
      const std::int64_t first = (j * s) % E;
      for (int e = 0; e < L; ++e) {
        const std::int64_t after = (e - first + E) % E;  // position of expert e in slot j's cycle
        count[static_cast<std::size_t>(e)] += full + (after < rest ? 1 : 0);
      }
    }
  } else {
    // Fewer tokens than the stride: token i starts at floor(i s / T).
    for (std::int64_t i = 0; i < T; ++i)
      for (int j = 0; j < k; ++j) {
        const std::int64_t e = (i * s / T + j * s) % E;
        if (e < L) ++count[static_cast<std::size_t>(e)];
      }
  }
  ExpertLoad load;
  for (std::int64_t c : count) {
    load.routed_tokens += static_cast<double>(c);
    if (c > 0) load.active_experts += 1;
  }
  return load;
}

// Distinct top_k picks per token: an expert is missed by a token with probability 1 - k / E.
// The busiest rank has at least one copy on one expert.
ExpertLoad uniform(double T, int k, int E, int ep) {
  const double missed = std::pow(1 - static_cast<double>(k) / E, T);
  return {std::max(1.0, static_cast<double>(E) / ep * (1 - missed)), std::max(1.0, T * k / ep)};
}

// AIConfigurator's power_law_logits_v3, the busiest rank, averaged over kDraws seeded draws.
ExpertLoad power_law(std::int64_t T, int k, int E, int ep, double alpha) {
  constexpr int kDraws = 32;
  constexpr std::uint64_t kSeed = 0x6d6f655f726f7574;  // fixed: the same shape gives the same load
  std::mt19937_64 rng(kSeed);
  const std::int64_t target = T * k;
  const bool many = target > E;
  const double lo = many ? 1.0 : 0.01, hi = many ? 0.8 * static_cast<double>(T) : 2.0;
  const double a1 = 1 - alpha;
  const int L = E / ep;
  std::vector<double> x(static_cast<std::size_t>(E));
  std::vector<std::int64_t> n(static_cast<std::size_t>(E));
  std::vector<int> order(static_cast<std::size_t>(E));
  ExpertLoad mean;
  for (int draw = 0; draw < kDraws; ++draw) {
    double sum = 0;
    for (double& v : x) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1), the same on every platform
      // Inverse CDF of x^-alpha on [lo, hi] (alpha = 1: log-uniform).
      v = std::abs(a1) < 1e-12 ? lo * std::pow(hi / lo, u)
                               : std::pow((std::pow(hi, a1) - std::pow(lo, a1)) * u + std::pow(lo, a1), 1 / a1);
      sum += v;
    }
    std::int64_t total = 0;
    for (std::size_t e = 0; e < x.size(); ++e) {
      n[e] = std::llround(x[e] / sum * static_cast<double>(target));
      total += n[e];
    }
    // Rounding leaves the sum off by a few copies: the largest experts take or give them.
    for (std::size_t e = 0; e < order.size(); ++e) order[e] = static_cast<int>(e);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return n[static_cast<std::size_t>(a)] > n[static_cast<std::size_t>(b)]; });
    for (std::int64_t d = target - total, i = 0; d != 0; ++i) {
      std::int64_t& c = n[static_cast<std::size_t>(order[static_cast<std::size_t>(i % E)])];
      if (d > 0) ++c, --d;
      else if (c > 0) --c, ++d;
    }
    ExpertLoad busiest;
    for (int r = 0; r < ep; ++r) {
      ExpertLoad rank;
      for (int e = r * L; e < (r + 1) * L; ++e) {
        rank.routed_tokens += static_cast<double>(n[static_cast<std::size_t>(e)]);
        if (n[static_cast<std::size_t>(e)] > 0) rank.active_experts += 1;
      }
      if (rank.routed_tokens > busiest.routed_tokens) busiest = rank;
    }
    mean.active_experts += busiest.active_experts / kDraws;
    mean.routed_tokens += busiest.routed_tokens / kDraws;
  }
  return mean;
}

}  // namespace

ExpertLoad busiest_rank_experts(const ExpertRouting& r, double tokens, int top_k, int experts, int ep) {
  if (r.kind == ExpertRoutingKind::kUniform) return uniform(tokens, top_k, experts, ep);
  const auto T = std::max<std::int64_t>(1, std::llround(tokens));
  if (r.kind == ExpertRoutingKind::kBalanced) return balanced(T, top_k, experts, experts / ep);
  return power_law(T, top_k, experts, ep, r.alpha);
}

}  // namespace exasim::models
