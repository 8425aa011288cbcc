#include "models/calibration/aic_nvlink_all_to_all_table.hpp"

#include "hw/error.hpp"
#include "models/calibration/csv_rows.hpp"

namespace exasim::models {

namespace {

const std::vector<std::string> kColumns = {"op_name", "kernel_source", "moe_dtype", "num_tokens", "moe_ep_size", "latency"};

template <class T>
T lookup(const CsvRows& rows, const std::string& column, const std::vector<std::pair<std::string, T>>& known) {
  const std::string& v = rows.text(column);
  std::string names;
  for (const auto& [name, value] : known) {
    if (v == name) return value;
    names += (names.empty() ? "" : ", ") + name;
  }
  throw ConfigError("unknown " + column + " \"" + v + "\"", {rows.path(), rows.line(), column}, "one of " + names);
}

}  // namespace

bool is_aic_nvlink_all_to_all_table(const std::string& path) { return csv_has_columns(path, kColumns); }

std::vector<ExpertAllToAllSample> read_aic_nvlink_all_to_all_table(const std::string& path) {
  using K = ExpertAllToAllKernel;
  using Ph = ExpertAllToAllPhase;
  using F = ExpertPayload;
  CsvRows rows(path, kColumns, "AIConfigurator trtllm_alltoall_perf.csv table");
  std::vector<ExpertAllToAllSample> out;
  while (rows.next()) {
    enum class Op { kPrepare, kDispatch, kCombine, kCombineLowPrecision };
    const Op op = lookup<Op>(rows, "op_name",
                             {{"alltoall_prepare", Op::kPrepare},
                              {"alltoall_dispatch", Op::kDispatch},
                              {"alltoall_combine", Op::kCombine},
                              {"alltoall_combine_low_precision", Op::kCombineLowPrecision}});
    ExpertAllToAllSample s;
    s.key.kernel = lookup<K>(rows, "kernel_source", {{"NVLinkTwoSided", K::kNvlinkTwoSided}, {"NVLinkOneSided", K::kNvlinkOneSided}});
    const F dtype = lookup<F>(rows, "moe_dtype", {{"bfloat16", F::kBf16}, {"fp8", F::kFp8}, {"nvfp4", F::kNvfp4}});
    switch (op) {
      case Op::kPrepare: s.key.phase = Ph::kPrepare, s.key.payload = F::kBf16; break;
      case Op::kDispatch: s.key.phase = Ph::kDispatch, s.key.payload = dtype; break;
      case Op::kCombine: s.key.phase = Ph::kCombine, s.key.payload = F::kBf16; break;
      case Op::kCombineLowPrecision: s.key.phase = Ph::kCombine, s.key.payload = F::kNvfp4; break;
    }
    if (s.key.kernel == K::kNvlinkOneSided && op == Op::kPrepare)
      throw ConfigError("the one-sided kernel has no prepare", {path, rows.line(), "op_name"}, "fix or drop the row");
    ExpertExchange& x = s.exchange;
    x.hidden = kNvlinkTableHidden, x.topk = kNvlinkTableTopk, x.experts = kNvlinkTableExperts;
    x.tokens = rows.positive_count("num_tokens");
    x.ranks = static_cast<int>(rows.count("moe_ep_size", 72, "an NVL72 rack's NVLink domain joins at most 72 GPUs"));
    if (x.ranks < 2 || x.experts % x.ranks != 0)
      throw ConfigError("moe_ep_size " + std::to_string(x.ranks) + ": the table's 256 experts do not spread over it",
                        {path, rows.line(), "moe_ep_size"}, "a group of 2 to 64 GPUs dividing 256");
    s.measured_s = rows.positive("latency") * 1e-3;
    s.source = path;
    s.line = rows.line();
    out.push_back(s);
  }
  if (out.empty()) throw ConfigError("no all-to-all call in the table", {path, rows.line(), ""}, "a table with at least one row");
  return out;
}

}  // namespace exasim::models
