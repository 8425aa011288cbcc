#include "models/calibration/vidur_op_table.hpp"

#include <filesystem>
#include <fstream>

#include "hw/error.hpp"
#include "models/calibration/csv_rows.hpp"

namespace exasim::models {

namespace {

bool flag(const CsvRows& r, const std::string& name) {
  const std::string* c = r.cell(name);
  return c && (*c == "True" || *c == "true" || *c == "1");
}

// Median time in seconds, or a negative value when the op was not measured in this row.
double median_s(const CsvRows& r, const std::string& op) {
  const std::string column = "time_stats." + op + ".median";
  const std::string* c = r.cell(column);
  if (!c || c->empty()) return -1;
  const double ms = r.number(column);
  if (!(ms > 0)) throw ConfigError("time must be positive", {r.path(), r.line(), column}, "fix or drop the row");
  return ms * 1e-3;
}

std::string table_source(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  if (auto pos = stem.find('_'); pos != std::string::npos) stem = stem.substr(pos + 1);  // drop "<gpu>_"
  if (stem.size() > 8 && stem.ends_with("_ops.csv")) stem.resize(stem.size() - 8);
  return stem;
}

void add_row(std::vector<KernelSample>& out, const CsvRows& r, const std::string& source) {
  const double T = r.number("num_tokens"), t = r.number("num_tensor_parallel_workers");
  const double a = r.number("n_head"), g = r.number("n_kv_head"), h = r.number("n_embd");
  const double ffn = r.number("n_expanded_embd");
  const bool gated = flag(r, "use_gated_mlp");
  if (!(T >= 1 && t >= 1 && a >= 1 && g >= 1 && h >= a && ffn >= 1))
    throw ConfigError("model dimensions out of range", {r.path(), r.line(), ""}, "num_tokens, TP, heads and widths must be positive");
  const double hd = std::floor(h / a);
  KernelSample base;
  base.source = source;
  base.line = r.line();
  base.tokens = T;
  base.tp = static_cast<int>(t);
  auto gemm = [&](const char* op, double n, double k) {
    const double time = median_s(r, op);
    if (time < 0) return;
    KernelSample s = base;
    s.kind = SampleKind::kGemm, s.op = op, s.m = T, s.n = n, s.k = k, s.time_s = time;
    out.push_back(s);
  };
  auto mem = [&](const char* op, MemoryOp kind, double rows, double cols) {
    const double time = median_s(r, op);
    if (time < 0) return;
    KernelSample s = base;
    s.kind = SampleKind::kMemoryOp, s.op = op, s.memory_op = kind, s.rows = rows, s.cols = cols, s.time_s = time;
    out.push_back(s);
  };
  gemm("attn_pre_proj", std::floor((a + 2 * g) * hd / t), h);
  gemm("attn_post_proj", h, std::floor(a * hd / t));
  gemm("mlp_up_proj", std::floor(ffn * (gated ? 2 : 1) / t), h);
  gemm("mlp_down_proj", h, std::floor(ffn / t));
  const MemoryOp norm = gated ? MemoryOp::kRmsNorm : MemoryOp::kLayerNorm;
  mem("input_layernorm", norm, T, h);
  mem("post_attention_layernorm", norm, T, h);
  mem("attn_rope", MemoryOp::kRope, T, std::floor((a + g) * hd / t));
  mem("mlp_act", gated ? MemoryOp::kSiluMul : MemoryOp::kGelu, T, std::floor(ffn / t));
  mem("add", MemoryOp::kResidualAdd, T, h);
}

}  // namespace

std::vector<KernelSample> read_vidur_op_table(const std::string& path) {
  CsvRows rows(path,
               {"num_tokens", "num_tensor_parallel_workers", "n_head", "n_kv_head", "n_embd", "n_expanded_embd",
                "use_gated_mlp"},
               "Vidur <gpu>_<model>_ops.csv table");
  const std::string source = table_source(path);
  std::vector<KernelSample> out;
  while (rows.next()) add_row(out, rows, source);
  return out;
}

std::string vidur_table_gpu(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  if (name.starts_with("a100_")) return "A100-SXM4-80GB";  // shared/data/README.md: A100-80GB SXM
  if (name.starts_with("a40_")) return "A40";
  return {};
}

bool is_vidur_op_table(const std::string& path) {
  if (!path.ends_with(".csv")) return false;
  std::ifstream in(path);
  std::string header;
  if (!in || !std::getline(in, header)) return false;
  return header.find("time_stats.") != std::string::npos && header.find("num_tokens") != std::string::npos;
}

}  // namespace exasim::models
