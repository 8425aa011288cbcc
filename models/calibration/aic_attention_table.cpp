#include "models/calibration/aic_attention_table.hpp"

#include <algorithm>
#include <filesystem>

#include "hw/error.hpp"
#include "models/calibration/csv_rows.hpp"

namespace exasim::models {

namespace {

// TensorRT-LLM 1.0 tables (a100_sxm) leave out the columns their collection held constant
// (MANIFEST.tsv: head_dim=128, window_size=0, attn_dtype and kv_cache_dtype bfloat16): those
// columns are optional here, with the manifest's values.
const std::vector<std::string> kPrefillColumns = {"batch_size", "isl", "num_heads", "num_key_value_heads", "latency"};
const std::vector<std::string> kDecodeColumns = {"batch_size", "num_heads", "num_key_value_heads", "step", "latency"};

DType dtype_of(const CsvRows& r, const char* column) {
  if (!r.has_column(column)) return DType::kBf16;
  const std::string& name = r.text(column);
  if (name == "bfloat16") return DType::kBf16;
  if (name == "float16") return DType::kFp16;
  if (name == "fp8") return DType::kFp8;
  throw ConfigError("unknown " + std::string(column) + " \"" + name + "\"", {r.path(), r.line(), column},
                    "known: bfloat16, float16, fp8");
}

// What every attention row (GQA's and MLA's) has: the call, its sequences and query heads.
KernelSample attention_row(const CsvRows& rows, bool prefill, const std::string& source) {
  KernelSample s;
  s.kind = prefill ? SampleKind::kAttentionPrefill : SampleKind::kAttentionDecode;
  s.source = source, s.line = rows.line(), s.timing = SampleTiming::kKernel;
  s.clocks = SampleClocks::kBurst;
  s.batch = rows.positive_count("batch_size");
  s.heads = rows.positive_count("num_heads");
  return s;
}

// DeepSeek's multi-head latent attention (context_mla_perf, generation_mla_perf): query heads on
// the GPU (128 / tp_size) of DeepSeek-V3's geometry, the KV cache's dtype; no KV-head column.
const std::vector<std::string> kMlaPrefillColumns = {"kv_cache_dtype", "num_heads", "batch_size", "isl", "tp_size", "latency"};
const std::vector<std::string> kMlaDecodeColumns = {"kv_cache_dtype", "num_heads", "batch_size", "tp_size", "step", "latency"};

bool is_mla(const std::string& path) {
  return !csv_has_columns(path, {"num_key_value_heads"}) &&
         (csv_has_columns(path, kMlaPrefillColumns) || csv_has_columns(path, kMlaDecodeColumns));
}

std::vector<KernelSample> read_mla(const std::string& path) {
  const bool prefill = csv_has_columns(path, kMlaPrefillColumns);
  CsvRows rows(path, prefill ? kMlaPrefillColumns : kMlaDecodeColumns,
               "AIConfigurator MLA table (context_mla_perf or generation_mla_perf)");
  const std::string source = std::filesystem::absolute(path).parent_path().filename().string();
  std::vector<KernelSample> out;
  while (rows.next()) {
    KernelSample s = attention_row(rows, prefill, source);
    s.mla = true;
    s.tp = static_cast<int>(rows.positive_count("tp_size"));
    s.cache_dtype = dtype_of(rows, "kv_cache_dtype");
    const std::string d = s.cache_dtype == DType::kFp8 ? "fp8" : "bf16";
    s.dtype = s.cache_dtype;  // prefill: its FMHA's dtype follows (mla_prefill_runs_fp8); decode streams it
    if (prefill) {
      s.seq = rows.positive_count("isl");
      s.op = "mla prefill kv " + d;
      s.tokens = s.batch * s.seq;
    } else {
      s.context = rows.count("step") + 1;  // the step's own token is in the cache it reads
      s.op = "mla decode kv " + d;
      s.tokens = s.batch;
    }
    s.time_s = rows.positive("latency") * 1e-3;
    out.push_back(s);
  }
  if (out.empty()) throw ConfigError("no MLA call in the table", {path, rows.line(), ""}, "a table with at least one row");
  return out;
}

}  // namespace

std::vector<KernelSample> read_aic_attention_table(const std::string& path) {
  if (is_mla(path)) return read_mla(path);
  const bool prefill = csv_has_columns(path, kPrefillColumns);
  CsvRows rows(path, prefill ? kPrefillColumns : kDecodeColumns, "AIConfigurator attention table (context_attention_perf or generation_attention_perf)");
  const std::string source = std::filesystem::absolute(path).parent_path().filename().string();
  std::vector<KernelSample> out;
  while (rows.next()) {
    KernelSample s = attention_row(rows, prefill, source);
    s.kv_heads = rows.positive_count("num_key_value_heads");
    if (s.kv_heads > s.heads)
      throw ConfigError("more key/value heads than query heads", {path, rows.line(), "num_key_value_heads"},
                        "grouped-query attention shares each key/value head among query heads");
    s.head_dim = rows.has_column("head_dim") ? rows.positive_count("head_dim") : 128;
    s.window = rows.has_column("window_size") ? rows.count("window_size") : 0;  // 0: none
    if (prefill) {
      s.seq = rows.positive_count("isl");
      // The FMHA computes in the cache's dtype: an fp8 KV cache runs the fp8 context kernel
      // (kernels-aic H100, 4096 tokens: bf16 in, fp8 cache 266 us, all bf16 339 us).
      const DType in = dtype_of(rows, "attn_dtype");
      s.cache_dtype = dtype_of(rows, "kv_cache_dtype");
      s.dtype = s.cache_dtype == DType::kFp8 ? DType::kFp8 : in;
      s.op = std::string("prefill ") + (s.dtype == DType::kFp8 ? "fp8" : "bf16");
      s.tokens = s.batch * s.seq;
    } else {
      const double step = rows.count("step");  // decode steps after the prompt
      const double isl = rows.has_column("isl") ? rows.count("isl") : 1;
      s.context = isl + step;
      s.dtype = s.cache_dtype = dtype_of(rows, "kv_cache_dtype");
      s.op = std::string("decode kv ") + (s.dtype == DType::kFp8 ? "fp8" : "bf16");
      s.tokens = s.batch;
    }
    s.time_s = rows.positive("latency") * 1e-3;
    if (rows.has_column("power")) s.power_w = rows.positive("power");
    out.push_back(s);
  }
  if (out.empty()) throw ConfigError("no attention call in the table", {path, rows.line(), ""}, "a table with at least one row");
  return out;
}

bool is_aic_attention_table(const std::string& path) {
  return csv_has_columns(path, kPrefillColumns) || csv_has_columns(path, kDecodeColumns) || is_mla(path);
}

}  // namespace exasim::models
