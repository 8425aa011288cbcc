#include "models/calibration/aic_nccl_table.hpp"

#include <array>
#include <cmath>
#include <utility>

#include "hw/error.hpp"
#include "models/calibration/csv_rows.hpp"

namespace exasim::models {

namespace {

constexpr std::array<std::pair<const char*, Collective>, 4> kOps = {{{"all_gather", Collective::kAllGather},
                                                                     {"all_reduce", Collective::kAllReduce},
                                                                     {"reduce_scatter", Collective::kReduceScatter},
                                                                     {"alltoall", Collective::kAllToAll}}};
// nccl-tests' dtype names (-d) and their bytes.
constexpr std::array<std::pair<const char*, double>, 8> kDtypes = {{{"half", 2},
                                                                    {"float16", 2},
                                                                    {"bfloat16", 2},
                                                                    {"float", 4},
                                                                    {"float32", 4},
                                                                    {"int8", 1},
                                                                    {"uint8", 1},
                                                                    {"fp8", 1}}};

template <typename Table>
auto lookup(const CsvRows& r, const char* column, const Table& table) {
  const std::string& name = r.text(column);
  for (const auto& [key, value] : table)
    if (name == key) return value;
  std::string known;
  for (const auto& entry : table) known += (known.empty() ? "" : ", ") + std::string(entry.first);
  throw ConfigError("unknown " + std::string(column) + " \"" + name + "\"", {r.path(), r.line(), column}, "known: " + known);
}

// The largest communicator a table row may name: the largest clusters are ~10^5 GPUs.
constexpr double kMaxRanks = 1 << 20;

// One call's group, buffer and time from the current row, `element` bytes per element of
// message_size (no GPU holds a TiB: a larger buffer is a typo or bytes given for elements).
void read_call(const CsvRows& rows, double element, CollectiveSample& s) {
  const double gpus = rows.count("num_gpus", kMaxRanks, "a collective joins at most 2^20 GPUs");
  if (gpus < 2)
    throw ConfigError("num_gpus must be a whole number >= 2", {rows.path(), rows.line(), "num_gpus"}, "a collective joins 2 or more GPUs");
  s.ranks = static_cast<int>(gpus);
  const double elements = rows.count("message_size", std::ldexp(1.0, 40) / element, "a call's buffer is at most 1 TiB");
  if (elements < 1)
    throw ConfigError("message_size must be positive", {rows.path(), rows.line(), "message_size"}, "elements per call");
  s.bytes = elements * element;
  s.time_s = rows.positive("latency", "in milliseconds; fix or drop the row") * 1e-3;
  s.line = rows.line();
}

}  // namespace

std::vector<CollectiveSample> read_aic_nccl_table(const std::string& path) {
  CsvRows rows(path, {"op_name", "nccl_dtype", "num_gpus", "message_size", "latency"},
               "AIConfigurator nccl_perf.csv table");
  std::vector<CollectiveSample> out;
  while (rows.next()) {
    CollectiveSample s;
    s.op = lookup(rows, "op_name", kOps);
    s.dtype = rows.text("nccl_dtype");
    read_call(rows, lookup(rows, "nccl_dtype", kDtypes), s);
    out.push_back(s);
  }
  if (out.empty()) throw ConfigError("no collective in the table", {path, rows.line(), ""}, "a table with at least one row");
  return out;
}

bool is_aic_nccl_table(const std::string& path) {
  return csv_has_columns(path, {"op_name", "nccl_dtype", "num_gpus", "message_size", "latency"}) ||
         is_aic_custom_all_reduce_table(path);
}

std::vector<CollectiveSample> read_aic_custom_all_reduce_table(const std::string& path) {
  CsvRows rows(path, {"num_gpus", "message_size", "latency"}, "AIConfigurator custom_allreduce_perf.csv table");
  std::vector<CollectiveSample> out;
  while (rows.next()) {
    CollectiveSample s;
    s.op = Collective::kAllReduce;
    s.dtype = "bfloat16";
    s.custom_kernel = true;
    read_call(rows, 2, s);  // bfloat16
    out.push_back(s);
  }
  if (out.empty()) throw ConfigError("no all-reduce in the table", {path, rows.line(), ""}, "a table with at least one row");
  return out;
}

bool is_aic_custom_all_reduce_table(const std::string& path) {
  return csv_has_columns(path, {"num_gpus", "message_size", "latency"}) && !csv_has_columns(path, {"op_name"});
}

}  // namespace exasim::models
