#include "models/calibration/vidur_op_table.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "hw/error.hpp"

namespace exasim::models {

namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    if (!cell.empty() && cell.back() == '\r') cell.pop_back();
    out.push_back(cell);
  }
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

struct Row {
  const std::string& path;
  int line;
  const std::map<std::string, std::size_t>& columns;
  const std::vector<std::string>& cells;

  const std::string* cell(const std::string& name) const {
    auto it = columns.find(name);
    if (it == columns.end() || it->second >= cells.size()) return nullptr;
    return &cells[it->second];
  }
  double number(const std::string& name) const {
    const std::string* c = cell(name);
    if (!c) throw ConfigError("missing column \"" + name + "\"", {path, line, name}, "is this a Vidur *_ops.csv table?");
    double v = 0;
    auto [ptr, ec] = std::from_chars(c->data(), c->data() + c->size(), v);
    if (ec != std::errc() || ptr != c->data() + c->size())
      throw ConfigError("\"" + *c + "\" is not a number", {path, line, name}, "fix or drop the row");
    return v;
  }
  bool flag(const std::string& name) const {
    const std::string* c = cell(name);
    return c && (*c == "True" || *c == "true" || *c == "1");
  }
  // Median time in seconds, or a negative value when the op was not measured in this row.
  double median_s(const std::string& op) const {
    const std::string* c = cell("time_stats." + op + ".median");
    if (!c || c->empty()) return -1;
    const double ms = number("time_stats." + op + ".median");
    if (!(ms > 0)) throw ConfigError("time must be positive", {path, line, "time_stats." + op + ".median"}, "fix or drop the row");
    return ms * 1e-3;
  }
};

std::string table_source(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  if (auto pos = stem.find('_'); pos != std::string::npos) stem = stem.substr(pos + 1);  // drop "<gpu>_"
  if (stem.size() > 8 && stem.ends_with("_ops.csv")) stem.resize(stem.size() - 8);
  return stem;
}

void add_row(std::vector<KernelSample>& out, const Row& r, const std::string& source) {
  const double T = r.number("num_tokens"), t = r.number("num_tensor_parallel_workers");
  const double a = r.number("n_head"), g = r.number("n_kv_head"), h = r.number("n_embd");
  const double ffn = r.number("n_expanded_embd");
  const bool gated = r.flag("use_gated_mlp");
  if (!(T >= 1 && t >= 1 && a >= 1 && g >= 1 && h >= a && ffn >= 1))
    throw ConfigError("model dimensions out of range", {r.path, r.line, ""}, "num_tokens, TP, heads and widths must be positive");
  const double hd = std::floor(h / a);
  KernelSample base;
  base.source = source;
  base.line = r.line;
  base.tokens = T;
  base.tp = static_cast<int>(t);
  auto gemm = [&](const char* op, double n, double k) {
    const double time = r.median_s(op);
    if (time < 0) return;
    KernelSample s = base;
    s.kind = SampleKind::kGemm, s.op = op, s.m = T, s.n = n, s.k = k, s.time_s = time;
    out.push_back(s);
  };
  auto mem = [&](const char* op, MemoryOp kind, double rows, double cols) {
    const double time = r.median_s(op);
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
  std::ifstream in(path);
  if (!in) throw IoError("cannot read op table", {path, 0, ""}, "check the path");
  std::string line;
  if (!std::getline(in, line)) throw ConfigError("empty file", {path, 1, ""}, "expected a CSV header");
  const std::vector<std::string> header = split_csv(line);
  std::map<std::string, std::size_t> columns;
  for (std::size_t i = 0; i < header.size(); ++i) columns[header[i]] = i;
  for (const char* required : {"num_tokens", "num_tensor_parallel_workers", "n_head", "n_kv_head", "n_embd",
                               "n_expanded_embd", "use_gated_mlp"}) {
    if (!columns.contains(required))
      throw ConfigError(std::string("missing column \"") + required + "\"", {path, 1, required},
                        "expected a Vidur <gpu>_<model>_ops.csv table");
  }
  const std::string source = table_source(path);
  std::vector<KernelSample> out;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> cells = split_csv(line);
    add_row(out, Row{path, number, columns, cells}, source);
  }
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
