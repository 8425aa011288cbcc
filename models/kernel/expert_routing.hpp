#pragma once
// How a mixture-of-experts router spreads a batch's tokens over the experts, and the work that
// leaves on one expert-parallel rank: how many of its experts at least one token reaches (each
// one's weights are read) and how many token copies they process (the grouped GEMMs' rows).
//   balanced   every expert the same share: token i's j-th pick is expert (i + j s) mod E with
//              s = ceil(E / top_k) (AIConfigurator's balanced_logits; below s tokens the picks
//              are spread over the ring the same way); the rank holding experts [0, E / ep)
//   uniform    each token's top_k distinct experts drawn uniformly at random: the expected
//              counts, the same on every rank (at least one copy on one expert)
//   power law  expert loads drawn from a power law of exponent alpha (AIConfigurator's
//              power_law_logits_v3: loads x^-alpha on [1, 0.8 T] when T top_k > E, else on
//              [0.01, 2], scaled to T top_k token copies and rounded, experts placed on ranks
//              in the draw's order), measured on the busiest rank: the mean over a fixed set of
//              seeded draws, so the same shape always gives the same load
// The power-law draw is taken as the benchmark takes it: an expert may receive more than T copies
// (a token picking it twice). kernels-aic H100, 8 experts over 8 ranks, top 2, 16384 tokens: the
// power-law rows take 4.5-4.7x the balanced ones, more than the 4x that one copy per token allows.
#include <optional>
#include <string>
#include <string_view>

namespace exasim::models {

// The most experts one MoE layer routes over. Published models route over 8-384 (Mixtral 8,
// DeepSeek-V3 256, Kimi K2 384); a count past this is a typo, and the routing draws hold a count
// per expert. Model configs, kernel tables and the CLI refuse more.
inline constexpr int kMaxExperts = 4096;
// The largest power-law exponent accepted. AIConfigurator measures 1.01 and 1.2; at 10 the draw
// already puts nearly every copy on the first expert, and past ~300 x^(1 - alpha) overflows.
inline constexpr double kMaxPowerLawAlpha = 10;

enum class ExpertRoutingKind { kBalanced, kUniform, kPowerLaw };

struct ExpertRouting {
  ExpertRoutingKind kind = ExpertRoutingKind::kBalanced;
  double alpha = 0;  // kPowerLaw: the exponent in (0, kMaxPowerLawAlpha]
};

// "balanced", "uniform", "power_law_A" or "power_law:A" (0 < A <= kMaxPowerLawAlpha, e.g.
// power_law_1.2); nullopt otherwise.
std::optional<ExpertRouting> parse_expert_routing(std::string_view name);
std::string expert_routing_name(const ExpertRouting& r);  // "balanced", "uniform", "power_law_1.2"

struct ExpertLoad {
  double active_experts = 0;  // the rank's experts that receive at least one token
  double routed_tokens = 0;   // token copies its experts process, over all of them
};

// The load of the rank the routing puts the most work on (balanced: rank 0, all equal to within
// one token) when `tokens` tokens each pick `top_k` of `experts` experts, spread over `ep` ranks
// (experts / ep each). Requires 1 <= top_k <= experts <= kMaxExperts, ep dividing experts.
ExpertLoad busiest_rank_experts(const ExpertRouting& r, double tokens, int top_k, int experts, int ep);

}  // namespace exasim::models
