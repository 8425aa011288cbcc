#include "models/calibration/aic_moe_table.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>
#include <string_view>
#include <tuple>

#include "hw/error.hpp"
#include "models/calibration/csv_rows.hpp"

namespace exasim::models {

namespace {

const std::vector<std::string> kColumns = {"num_tokens", "hidden_size", "inter_size", "topk", "num_experts",
                                           "moe_tp_size", "moe_ep_size", "distribution", "latency"};

// TensorRT-LLM's min-latency MoE path (Blackwell, nvfp4): its own fused kernels, not the
// grouped-GEMM pipeline moe_experts_model prices. kernels-aic B200, 160 experts of 6144 x 2560,
// top 8, 16 tokens on one GPU: 260 us where the CUTLASS op takes 1042 us; 16384 tokens of
// DeepSeek-V3's layer on 8 GPUs: 1.86 ms where CUTLASS takes 0.98 ms.
constexpr std::string_view kMinLatencySource = "moe_torch_flow_min_latency";

// Whether the kernel source runs a gated (SwiGLU) MLP; throws on a source this reader does not know.
bool gated_source(const CsvRows& r) {
  if (!r.has_column("kernel_source")) return true;  // TensorRT-LLM 1.0's moe_torch_flow (a100_sxm)
  const std::string& k = r.text("kernel_source");
  if (k == "moe_torch_flow_nongated") return false;
  if (k == "moe_torch_flow_cutlass" || k == "moe_torch_flow" || k == "moe_torch_flow_min_latency" || k == "deepgemm")
    return true;
  throw ConfigError("unknown kernel_source \"" + k + "\"", {r.path(), r.line(), "kernel_source"},
                    "known: moe_torch_flow_cutlass, moe_torch_flow_nongated, moe_torch_flow_min_latency, "
                    "moe_torch_flow, deepgemm");
}

}  // namespace

AicMoeTable read_aic_moe_table(const std::string& path) {
  CsvRows rows(path, kColumns, "AIConfigurator MoE table (moe_perf)");
  const std::string source = std::filesystem::absolute(path).parent_path().filename().string();
  AicMoeTable out;
  // Power-law loads take a few thousand draws each; the table repeats each shape for every
  // format and TP degree.
  std::map<std::tuple<int, double, double, int, int, int>, ExpertLoad> loads;
  while (rows.next()) {
    const std::string format_name = rows.has_column("moe_dtype") ? rows.text("moe_dtype") : "bfloat16";
    const GemmFormat* format = find_gemm_format(format_name, DType::kBf16);
    if (!format) {
      ++out.left_out[format_name + " (no GEMM recipe for that format)"];
      continue;
    }
    const bool gated = gated_source(rows);  // checks the kernel source
    if (rows.has_column("kernel_source") && rows.text("kernel_source") == kMinLatencySource) {
      ++out.left_out[std::string(kMinLatencySource) + " (another kernel, not modelled)"];
      continue;
    }
    KernelSample s;
    s.kind = SampleKind::kMoeExperts;
    s.source = source, s.line = rows.line(), s.timing = SampleTiming::kKernel, s.clocks = SampleClocks::kBurst;
    s.dtype = format->dtype, s.recipe = format->recipe, s.cast = format->cast;
    const double T = rows.positive_count("num_tokens"), h = rows.positive_count("hidden_size");
    const double inter = rows.positive_count("inter_size"), k = rows.positive_count("topk");
    const double E = rows.positive_count("num_experts"), tp = rows.positive_count("moe_tp_size");
    const double ep = rows.positive_count("moe_ep_size");
    if (E > kMaxExperts)
      throw ConfigError("num_experts above " + std::to_string(kMaxExperts), {path, rows.line(), "num_experts"},
                        "MoE models route over 8-384 experts; fix or drop the row");
    if (k > E) throw ConfigError("topk above num_experts", {path, rows.line(), "topk"}, "each token picks distinct experts");
    if (static_cast<long long>(E) % static_cast<long long>(ep) != 0)
      throw ConfigError("moe_ep_size does not divide num_experts", {path, rows.line(), "moe_ep_size"},
                        "expert parallelism gives every rank the same number of experts");
    if (static_cast<long long>(inter) % static_cast<long long>(tp) != 0)
      throw ConfigError("moe_tp_size does not divide inter_size", {path, rows.line(), "moe_tp_size"},
                        "expert tensor parallelism splits each FFN evenly");
    const std::string& dist = rows.text("distribution");
    const auto routing = parse_expert_routing(dist);
    if (!routing)
      throw ConfigError("unknown distribution \"" + dist + "\"", {path, rows.line(), "distribution"},
                        "balanced, uniform or power_law_A with 0 < A <= " + std::to_string(static_cast<int>(kMaxPowerLawAlpha)));
    const auto key = std::make_tuple(static_cast<int>(routing->kind), routing->alpha, T, static_cast<int>(k),
                                     static_cast<int>(E), static_cast<int>(ep));
    auto it = loads.find(key);
    if (it == loads.end())
      it = loads.emplace(key, busiest_rank_experts(*routing, T, static_cast<int>(k), static_cast<int>(E), static_cast<int>(ep))).first;
    s.moe.tokens = T, s.moe.hidden = h, s.moe.expert_ffn = inter / tp, s.moe.top_k = k, s.moe.experts = E;
    s.moe.gated = gated;
    s.moe.load = it->second;
    s.op = std::string("moe ") + (s.moe.gated ? "" : "nongated ") + format_name + " " + dist;
    s.tokens = T;
    s.tp = static_cast<int>(tp), s.ep = static_cast<int>(ep);
    s.time_s = rows.positive("latency") * 1e-3;
    out.samples.push_back(s);
  }
  if (out.samples.empty())
    throw ConfigError("no MoE call in the table the model can price", {path, rows.line(), ""},
                      "a table with at least one row of a GEMM format (bfloat16, fp8, fp8_block, nvfp4, ...)");
  return out;
}

bool is_aic_moe_table(const std::string& path) { return csv_has_columns(path, kColumns); }

MoeRowsDropped drop_moe_rows_slower_than_more_work(std::vector<KernelSample>& samples, double tolerance) {
  // A balanced configuration: everything but the token count.
  using Config = std::tuple<std::string, double, double, double, double, bool, int, int>;
  const auto config = [](const KernelSample& s, int ep) {
    return Config{s.op, s.moe.hidden, s.moe.expert_ffn, s.moe.experts, s.moe.top_k, s.moe.gated, s.tp, ep};
  };
  const auto balanced = [](const KernelSample& s) {
    return s.kind == SampleKind::kMoeExperts && s.op.ends_with(" balanced");
  };
  std::map<Config, std::map<double, double>> times;  // config -> tokens -> measured
  for (const KernelSample& s : samples)
    if (balanced(s)) times[config(s, s.ep)][s.tokens] = s.time_s;
  std::set<Config> slower;
  for (const auto& [c, by_tokens] : times) {
    if (std::get<7>(c) < 2) continue;
    Config half = c;
    std::get<7>(half) /= 2;
    const auto h = times.find(half);
    if (h == times.end()) continue;
    std::vector<double> ratios;
    for (const auto& [tokens, t] : by_tokens)
      if (const auto it = h->second.find(tokens); it != h->second.end()) ratios.push_back(t / it->second);
    if (ratios.empty()) continue;
    std::nth_element(ratios.begin(), ratios.begin() + static_cast<long>(ratios.size() / 2), ratios.end());
    if (ratios[ratios.size() / 2] > tolerance) slower.insert(c);
  }
  // The fastest time at each token count or more, per configuration.
  std::map<Config, std::map<double, double>> fastest_from;
  for (const auto& [c, by_tokens] : times) {
    double best = std::numeric_limits<double>::infinity();
    auto& f = fastest_from[c];
    for (auto it = by_tokens.rbegin(); it != by_tokens.rend(); ++it) {
      f[it->first] = best;  // over strictly more tokens
      best = std::min(best, it->second);
    }
  }
  MoeRowsDropped dropped;
  const auto first = std::remove_if(samples.begin(), samples.end(), [&](const KernelSample& s) {
    if (!balanced(s)) return false;
    const Config c = config(s, s.ep);
    if (slower.contains(c)) return ++dropped.than_half_ranks, true;
    if (s.time_s > tolerance * fastest_from[c][s.tokens]) return ++dropped.than_more_tokens, true;
    return false;
  });
  samples.erase(first, samples.end());
  return dropped;
}

}  // namespace exasim::models
