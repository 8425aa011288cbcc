#include "models/calibration/aic_deepep_table.hpp"

#include "hw/error.hpp"
#include "models/calibration/csv_rows.hpp"

namespace exasim::models {

namespace {

const std::vector<std::string> kShape = {"hidden_size", "num_token", "num_topk", "num_experts"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<std::string> kNormal = with(kShape, {"dispatch_sms", "dispatch_transmit_us", "combine_sms", "combine_transmit_us"});
const std::vector<std::string> kLowLatency = with(kShape, {"dispatch_avg_t_us", "combine_avg_t_us"});

}  // namespace

bool is_aic_deepep_table(const std::string& path) {
  return csv_has_columns(path, kNormal) || csv_has_columns(path, kLowLatency);
}

std::vector<ExpertAllToAllSample> read_aic_deepep_table(const std::string& path, int ranks) {
  const bool normal = csv_has_columns(path, kNormal);
  CsvRows rows(path, normal ? kNormal : kLowLatency,
               "AIConfigurator DeepEP table (wideep_deepep_normal_perf.csv or wideep_deepep_ll_perf.csv)");
  std::vector<ExpertAllToAllSample> out;
  while (rows.next()) {
    ExpertExchange x;
    x.hidden = static_cast<int>(rows.positive_count("hidden_size"));
    x.tokens = rows.positive_count("num_token");
    x.topk = static_cast<int>(rows.positive_count("num_topk"));
    x.experts = static_cast<int>(rows.positive_count("num_experts"));
    x.ranks = ranks;
    const SourceLocation at{path, rows.line(), "num_experts"};
    if (x.topk > x.experts)
      throw ConfigError("num_topk " + std::to_string(x.topk) + " is above num_experts " + std::to_string(x.experts),
                        {path, rows.line(), "num_topk"}, "a token is routed to at most every expert once");
    if (x.experts < ranks || x.experts % ranks != 0)
      throw ConfigError(std::to_string(x.experts) + " experts do not spread evenly over the table's " +
                            std::to_string(ranks) + " GPUs", at, "fix or drop the row");
    for (const ExpertAllToAllPhase phase : {ExpertAllToAllPhase::kDispatch, ExpertAllToAllPhase::kCombine}) {
      const bool d = phase == ExpertAllToAllPhase::kDispatch;
      ExpertAllToAllSample s;
      s.key.kernel = normal ? ExpertAllToAllKernel::kDeepEpNormal : ExpertAllToAllKernel::kDeepEpLowLatency;
      s.key.phase = phase;
      s.key.payload = d ? ExpertPayload::kFp8 : ExpertPayload::kBf16;
      s.exchange = x;
      if (normal) s.exchange.sms = static_cast<int>(rows.positive_count(d ? "dispatch_sms" : "combine_sms"));
      s.measured_s = rows.positive(normal ? (d ? "dispatch_transmit_us" : "combine_transmit_us")
                                          : (d ? "dispatch_avg_t_us" : "combine_avg_t_us")) * 1e-6;
      s.source = path;
      s.line = rows.line();
      out.push_back(s);
    }
  }
  if (out.empty()) throw ConfigError("no DeepEP call in the table", {path, rows.line(), ""}, "a table with at least one row");
  return out;
}

}  // namespace exasim::models
