#include "models/calibration/aic_gemm_table.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "hw/error.hpp"
#include "models/calibration/csv_rows.hpp"

namespace exasim::models {

namespace {

const GemmFormat& format_of(const CsvRows& r) {
  const std::string& name = r.text("gemm_dtype");
  for (const GemmFormat& f : gemm_formats())
    if (name == f.name) return f;
  std::string known;
  for (const GemmFormat& f : gemm_formats()) known += (known.empty() ? "" : ", ") + std::string(f.name);
  throw ConfigError("unknown gemm_dtype \"" + name + "\"", {r.path(), r.line(), "gemm_dtype"}, "known: " + known);
}

// The GPU folder (".../kernels-aic/h100_sxm/gemm_perf.csv" -> "h100_sxm").
std::string folder_of(const std::string& path) {
  return std::filesystem::absolute(path).parent_path().filename().string();
}

}  // namespace

AicGemmTable read_aic_gemm_table(const std::string& path) {
  CsvRows rows(path, {"gemm_dtype", "m", "n", "k", "latency"}, "AIConfigurator gemm_perf.csv table");
  const std::string source = folder_of(path);
  AicGemmTable out;
  while (rows.next()) {
    const GemmFormat& f = format_of(rows);
    KernelSample s;
    s.kind = SampleKind::kGemm;
    s.op = std::string(f.name);
    s.source = source;
    s.line = rows.line();
    s.dtype = f.dtype;
    s.recipe = f.recipe;
    s.cast = f.cast;
    s.timing = SampleTiming::kKernel;
    s.clocks = SampleClocks::kBurst;  // kernel_sample.hpp: the replays never reach the power limit
    s.m = rows.count("m"), s.n = rows.count("n"), s.k = rows.count("k");
    s.time_s = rows.positive("latency") * 1e-3;
    if (rows.has_column("power")) s.power_w = rows.positive("power", "in watts; fix or drop the row");
    s.tokens = s.m;
    if (s.m == 0 || s.n == 0 || s.k == 0) {
      ++out.empty_rows;
      continue;
    }
    out.samples.push_back(s);
  }
  if (out.samples.empty())
    throw ConfigError("no GEMM to fit (rows with a zero dimension: " + std::to_string(out.empty_rows) + ")", {path, rows.line(), ""},
                      "a table with at least one GEMM of m, n, k > 0");
  return out;
}

std::string aic_table_gpu(const std::string& path) {
  const std::string folder = folder_of(path);
  // shared/data/kernels-aic/MANIFEST.tsv names each folder's device.
  if (folder == "a100_sxm") return "A100-SXM4-80GB";  // NVIDIA A100-SXM4-80GB
  if (folder == "h100_sxm") return "H100-SXM5-80GB";  // NVIDIA H100 80GB HBM3
  if (folder == "h200_sxm") return "H200-SXM-141GB";  // NVIDIA H200
  if (folder == "b200_sxm") return "B200";
  if (folder == "gb200") return "GB200";
  if (folder == "l40s") return "L40S";
  return {};
}

bool is_aic_gemm_table(const std::string& path) {
  return csv_has_columns(path, {"gemm_dtype", "m", "n", "k", "latency"});
}

}  // namespace exasim::models
