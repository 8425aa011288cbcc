#include "models/calibration/aic_moe_table.hpp"

#include <filesystem>
#include <tuple>

#include "hw/error.hpp"
#include "models/calibration/csv_rows.hpp"

namespace exasim::models {

namespace {

const std::vector<std::string> kColumns = {"num_tokens", "hidden_size", "inter_size", "topk", "num_experts",
                                           "moe_tp_size", "moe_ep_size", "distribution", "latency"};

double positive_count(const CsvRows& r, const char* column) {
  const double v = r.count(column);
  if (v < 1) throw ConfigError(std::string(column) + " must be positive", {r.path(), r.line(), column}, "fix or drop the row");
  return v;
}

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
      ++out.left_out[format_name];
      continue;
    }
    KernelSample s;
    s.kind = SampleKind::kMoeExperts;
    s.source = source, s.line = rows.line(), s.timing = SampleTiming::kKernel, s.clocks = SampleClocks::kBurst;
    s.dtype = format->dtype, s.recipe = format->recipe, s.cast = format->cast;
    const double T = positive_count(rows, "num_tokens"), h = positive_count(rows, "hidden_size");
    const double inter = positive_count(rows, "inter_size"), k = positive_count(rows, "topk");
    const double E = positive_count(rows, "num_experts"), tp = positive_count(rows, "moe_tp_size");
    const double ep = positive_count(rows, "moe_ep_size");
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
                        "balanced, uniform or power_law_A with A > 0");
    const auto key = std::make_tuple(static_cast<int>(routing->kind), routing->alpha, T, static_cast<int>(k),
                                     static_cast<int>(E), static_cast<int>(ep));
    auto it = loads.find(key);
    if (it == loads.end())
      it = loads.emplace(key, busiest_rank_experts(*routing, T, static_cast<int>(k), static_cast<int>(E), static_cast<int>(ep))).first;
    s.moe.tokens = T, s.moe.hidden = h, s.moe.expert_ffn = inter / tp, s.moe.top_k = k, s.moe.experts = E;
    s.moe.gated = gated_source(rows);
    s.moe.load = it->second;
    s.op = std::string("moe ") + (s.moe.gated ? "" : "nongated ") + format_name + " " + dist;
    s.tokens = T;
    s.time_s = rows.positive("latency") * 1e-3;
    out.samples.push_back(s);
  }
  if (out.samples.empty())
    throw ConfigError("no MoE call in the table the model can price", {path, rows.line(), ""},
                      "a table with at least one row of a GEMM format (bfloat16, fp8, fp8_block, nvfp4, ...)");
  return out;
}

bool is_aic_moe_table(const std::string& path) { return csv_has_columns(path, kColumns); }

}  // namespace exasim::models
