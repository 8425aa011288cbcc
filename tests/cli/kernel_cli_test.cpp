// `exasim kernel` and `exasim calibrate` as users and scripts run them: JSON fields, values
// against hand calculations, calibration files, and clean one-line errors.
#include <doctest/doctest.h>

#include "approx.hpp"
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <array>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace {

using exasim::testing::check_clean_error;
using exasim::testing::contains;
using Result = exasim::testing::CliResult;
Result run(const std::string& args) { return exasim::testing::run_cli(args); }

nlohmann::json run_json(const std::string& args) {
  const Result r = run(args + " --json");
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.output);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The comma-separated fields of one line of a residuals CSV (no quoting: it writes none).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
  return f;
}

const std::string kData = std::string(EXASIM_TEST_DATA) + "/vidur/";

}  // namespace

TEST_CASE("cli: kernel gemm answers with time, bound and rates") {
  const auto j = run_json("kernel --gpu A100-SXM4-80GB --op gemm --m 8192 --n 8192 --k 8192");
  for (const char* key : {"time_s", "bound", "tflops", "bytes_per_s", "flops", "bytes", "tile", "split_k", "waves"})
    CHECK(j.contains(key));
  CHECK(j["flops"].get<double>() == exasim::testing::approx(2.0 * 8192 * 8192 * 8192));
  CHECK(j["tflops"].get<double>() == exasim::testing::approx(j["flops"].get<double>() / j["time_s"].get<double>() / 1e12));
  // Below the 312 TFLOP/s peak, above 60% of it for this large square GEMM.
  CHECK(j["tflops"].get<double>() < 312);
  CHECK(j["tflops"].get<double>() > 0.6 * 312);
  // Decode: weights over bandwidth, well below 2039 GB/s.
  const auto d = run_json("kernel --gpu A100-SXM4-80GB --op gemm --m 1 --n 8192 --k 8192");
  CHECK(d["bound"] == "hbm");
  CHECK(d["bytes_per_s"].get<double>() < 2039e9);
  CHECK(d["bytes_per_s"].get<double>() > 1000e9);
}

TEST_CASE("cli: kernel attention, memory ops and adam") {
  const auto p = run_json("kernel --gpu H100-SXM5-80GB --op attention_prefill --batch 1 --seq 8192 --heads 32 "
                          "--kv-heads 8 --head-dim 128");
  CHECK(p["flops"].get<double>() == exasim::testing::approx(4.0 * 32 * 128 * 8192 * 8193 / 2));
  const auto full = run_json("kernel --gpu H100-SXM5-80GB --op attention_prefill --batch 1 --seq 8192 --heads 32 "
                             "--kv-heads 8 --head-dim 128 --no-causal");
  CHECK(full["time_s"].get<double>() > 1.8 * p["time_s"].get<double>());
  const auto d = run_json("kernel --gpu A100-SXM4-80GB --op attention_decode --batch 16 --context 4096 --heads 32 "
                          "--kv-heads 8 --head-dim 128 --dtype bf16");
  CHECK(d["bound"] == "hbm");
  CHECK(d.contains("kv_splits"));
  // A sliding window: prefill counts min(position + 1, window) keys per query; decode reads the
  // window's KV tokens only.
  const auto band = run_json("kernel --gpu H100-SXM5-80GB --op attention_prefill --batch 1 --seq 8192 --heads 32 "
                             "--kv-heads 8 --head-dim 128 --window 1024");
  CHECK(band["flops"].get<double>() == exasim::testing::approx(4.0 * 32 * 128 * (1024.0 * 1025 / 2 + (8192 - 1024) * 1024.0)));
  const auto windowed = run_json("kernel --gpu A100-SXM4-80GB --op attention_decode --batch 16 --context 32768 --heads 32 "
                                 "--kv-heads 8 --head-dim 128 --window 4096");
  CHECK(windowed["time_s"].get<double>() == d["time_s"].get<double>());
  // Which decode kernels: TensorRT-LLM's put a KV head's 32-query group in the rows of matrix
  // MMAs (B200's table: 16 x 32768 fp8 tokens, 32 heads on 1 KV head, 24.6 us); CUDA-core paged
  // attention does 32 x the dot products on the vector units, fp8 at the fp32 rate.
  const std::string gqa = "kernel --gpu B200 --op attention_decode --batch 16 --context 32768 --heads 32 --kv-heads 1 "
                          "--head-dim 128 --dtype fp8";
  const auto matrix = run_json(gqa);
  const auto vector = run_json(gqa + " --decode-attention vector");
  CHECK(matrix["decode_attention"] == "matrix");
  CHECK(vector["decode_attention"] == "vector");
  CHECK(vector["bound"] == "vector");
  CHECK(matrix["bound"] != "vector");
  CHECK(vector["time_s"].get<double>() > 3 * matrix["time_s"].get<double>());
  CHECK(run_json(gqa + " --decode-attention matrix")["time_s"] == matrix["time_s"]);
  for (const char* op : {"elementwise", "silu_mul", "rmsnorm", "layernorm", "softmax", "rope", "embedding"}) {
    const auto m = run_json(std::string("kernel --gpu A100-SXM4-80GB --op ") + op + " --rows 4096 --cols 8192");
    CHECK(m["time_s"].get<double>() > 0);
  }
  const auto adam = run_json("kernel --gpu A100-SXM4-80GB --op adam --params 1e9");
  CHECK(adam["bytes"].get<double>() == exasim::testing::approx(30e9));
  CHECK(adam["time_s"].get<double>() > 30e9 / 2039e9);
}

TEST_CASE("cli: kernel --calibration uses the fitted parameters") {
  // A calibration that differs from the family default (which is the committed A100 fit itself).
  const std::string calib = (std::filesystem::temp_directory_path() / "exasim_cli_kernel_calibration.yaml").string();
  std::ofstream(calib) << "gpu: A100-SXM4-80GB\nkernel:\n  matrix_efficiency: 0.5\n";
  const auto with = run_json("kernel --gpu A100-SXM4-80GB --op gemm --m 4096 --n 4096 --k 4096 --calibration '" + calib + "'");
  const auto without = run_json("kernel --gpu A100-SXM4-80GB --op gemm --m 4096 --n 4096 --k 4096 --calibration none");
  CHECK(contains(with["kernel_parameters"].get<std::string>(), "calibration"));
  CHECK(contains(without["kernel_parameters"].get<std::string>(), "family default"));
  CHECK(with["time_s"].get<double>() != without["time_s"].get<double>());
  // No flag: the GPU's own calibration (configs/calibration/defaults.yaml), exactly as if named.
  const std::string own = std::string(EXASIM_SOURCE_DIR) + "/configs/calibration/a100-sxm4-80gb-aic.yaml";
  const auto plain = run_json("kernel --gpu A100-SXM4-80GB --op gemm --m 4096 --n 4096 --k 4096");
  const auto named = run_json("kernel --gpu A100-SXM4-80GB --op gemm --m 4096 --n 4096 --k 4096 --calibration '" + own + "'");
  CHECK(contains(plain["kernel_parameters"].get<std::string>(), "a100-sxm4-80gb-aic.yaml"));
  CHECK(plain["time_s"].get<double>() == named["time_s"].get<double>());
  CHECK(plain["time_s"].get<double>() != without["time_s"].get<double>());
  // A GPU the index does not list runs on its family defaults.
  const auto mi300 = run_json("kernel --gpu MI300X --op gemm --m 4096 --n 4096 --k 4096");
  CHECK(contains(mi300["kernel_parameters"].get<std::string>(), "family default"));
  const Result text = run("kernel --gpu A100-SXM4-80GB --op gemm --m 4096 --n 4096 --k 4096");
  CHECK(text.status == 0);
  CHECK(contains(text.output, "bound"));
  CHECK(contains(text.output, "TFLOP/s"));
}

TEST_CASE("cli: kernel errors are one clean line") {
  check_clean_error(run("kernel --gpu A100-SXM4-80GB --op gemm --m 128 --n 128"));
  check_clean_error(run("kernel --gpu A100-SXM4-80GB --op convolution --m 1"));
  check_clean_error(run("kernel --gpu A100-SXM5 --op gemm --m 1 --n 1 --k 1"));
  check_clean_error(run("kernel --gpu A100-SXM4-80GB --op gemm --m 1 --n 1 --k 1 --dtype bf17"));
  check_clean_error(run("kernel --gpu A100-SXM4-80GB --op rmsnorm --rows 4"));
  check_clean_error(run("kernel --gpu A100-SXM4-80GB --op gemm --m 1 --n 1 --k 1 --calibration /no/such.yaml"));
  const Result r = run("kernel --gpu A100-SXM4-80GB --op gemm --m 128 --n 128");
  CHECK(contains(r.output, "--k"));
  // Grouped-query attention: the key/value heads divide the query heads.
  for (const char* kv : {"5", "64", "-2"}) {
    const std::string shape = std::string(" --heads 32 --kv-heads ") + kv + " --head-dim 128";
    const Result prefill = run("kernel --gpu H100-SXM5-80GB --op attention_prefill --batch 1 --seq 1024" + shape);
    check_clean_error(prefill);
    CHECK(contains(prefill.output, "--kv-heads"));
    check_clean_error(run("kernel --gpu H100-SXM5-80GB --op attention_decode --batch 1 --context 1024" + shape));
  }
}

TEST_CASE("cli: calibrate fits Vidur tables, reports held-out error and baselines, writes the file") {
  namespace fs = std::filesystem;
  const std::string out = (fs::temp_directory_path() / "exasim_cli_calibration.yaml").string();
  const std::string residuals = (fs::temp_directory_path() / "exasim_cli_residuals.csv").string();
  const std::string args = "calibrate '" + kData + "a100_meta-llama_llama-2-7b-hf_ops.csv' '" + kData +
                           "a100_qwen_qwen-72b_ops.csv' --fit qwen_qwen-72b --date 2026-01-01 --starts 4 -o '" + out +
                           "' --residuals '" + residuals + "'";
  const Result r = run(args);
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  for (const char* part : {"held out", "tile model", "roofline, 3 fitted", "datasheet roofline", "uncalibrated",
                           "layer sum", "matrix_efficiency"})
    CHECK(contains(r.output, part));
  const std::string file = slurp(out);
  CHECK(contains(file, "gpu: A100-SXM4-80GB"));
  CHECK(contains(file, "date: 2026-01-01"));
  CHECK(contains(file, "matrix_efficiency:"));
  // Same input, same file, bit for bit; and the file is usable by `exasim kernel`.
  REQUIRE(run(args).status == 0);
  CHECK(slurp(out) == file);
  CHECK(run("kernel --gpu A100-SXM4-80GB --op gemm --m 64 --n 64 --k 64 --calibration '" + out + "'").status == 0);
  fs::remove(out);

  // --residuals: one row per measured kernel; the held-out GEMM rows give the table's "all" error.
  std::istringstream csv(slurp(residuals));
  std::string line;
  std::getline(csv, line);
  CHECK(line ==
        "set,source,op,tp,tokens,m,n,k,batch,rows,cols,measured_us,predicted_us,error,bound,tile,split_k,library_tile,"
        "library_split_k,line,seq,context,heads,kv_heads,head_dim,window");
  int rows = 0, held_gemms = 0;
  double held_abs = 0;
  while (std::getline(csv, line)) {
    const std::vector<std::string> f = csv_fields(line);
    REQUIRE(f.size() >= 14);
    ++rows;
    const double measured = std::stod(f[11]), predicted = std::stod(f[12]), error = std::stod(f[13]);
    // The CSV prints 6 significant digits: predicted / measured - 1 agrees to about 1e-5 absolute.
    CHECK(std::abs(error - (predicted / measured - 1)) < 2e-5);
    if (f[0] == "held_out" && std::stod(f[5]) > 0) {  // GEMM rows carry m
      ++held_gemms;
      held_abs += std::abs(error);
    }
  }
  CHECK(contains(r.output, "of " + std::to_string(rows) + " measured kernels"));
  REQUIRE(held_gemms > 0);
  // "held out, GEMMs": the tile model's "all" row ends with the all-token-count error.
  const auto at = r.output.find("held out, GEMMs");
  REQUIRE(at != std::string::npos);
  std::istringstream table(r.output.substr(at));
  double printed = -1;
  while (printed < 0 && std::getline(table, line)) {
    std::istringstream words(line);
    std::string a, b, op;
    words >> a >> b >> op;
    if (a == "tile" && b == "model" && op == "all") printed = std::stod(line.substr(line.find_last_of(' ') + 1));
  }
  REQUIRE(printed > 0);
  CHECK(100 * held_abs / held_gemms == exasim::testing::approx(printed).epsilon(0.01));
  fs::remove(residuals);
}

// An exasim-bench GPU profile whose GEMMs record cuBLASLt's tile: the calibration says how often the
// model picks the library's tile. Sixteen GEMMs (two for each of the 8 GEMM parameters, the
// fewest a fit takes): the library's tile is set to what the model picks on the first eight (read
// back from `exasim calibrate --residuals` of the same profile) and to another on the last eight,
// so the count is known: 8 of 16.
TEST_CASE("cli: calibrate on a GPU profile reports how often the model picks the library's tile") {
  namespace fs = std::filesystem;
  const std::string profile = (fs::temp_directory_path() / "exasim_cli_gpu_profile.json").string();
  const std::string residuals = (fs::temp_directory_path() / "exasim_cli_gpu_residuals.csv").string();
  const std::string out = (fs::temp_directory_path() / "exasim_cli_gpu_cal.yaml").string();
  std::vector<std::array<double, 3>> shapes;
  for (double m : {1024.0, 2048.0, 4096.0, 8192.0})
    for (double n : {1024.0, 8192.0})
      for (double k : {1024.0, 4096.0}) shapes.push_back({m, n, k});
  REQUIRE(shapes.size() == 16);
  auto write = [&](const std::vector<std::string>& tiles) {
    nlohmann::json p = {{"schema_version", 1}, {"tool", "exasim-bench test"}, {"date", "2026-12-03T00:00:00Z"},
                        {"host", {{"hostname", "h"}, {"cpu_model", "c"}}},
                        {"devices", {{{"index", 0}, {"kind", "gpu"}, {"name", "A100-SXM4-80GB"}, {"compute_units", 108},
                                      {"clock_hz", 1.41e9}, {"memory_bytes", 8.0e10}, {"l2_bytes", 4.0e7}}}}};
    nlohmann::json ms = nlohmann::json::array();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const double m = shapes[i][0], n = shapes[i][1], k = shapes[i][2], t = 2 * m * n * k / 250e12;
      nlohmann::json j = {{"suite", "gemm"}, {"op", "gemm"}, {"device", 0}, {"dtype", "bf16"},
                          {"shape", {{"m", m}, {"n", n}, {"k", k}, {"batch", 1}}}, {"repeats", 5},
                          {"time_s", {{"min", t}, {"median", t}, {"max", t}}}};
      if (!tiles.empty()) {
        const auto x = tiles[i].find('x');
        j["library"] = {{"tile_id", 1}, {"tile_m", std::stoi(tiles[i].substr(0, x))},
                        {"tile_n", std::stoi(tiles[i].substr(x + 1))}, {"split_k", 1}};
      }
      ms.push_back(j);
    }
    p["measurements"] = ms;
    std::ofstream(profile) << p.dump(1);
  };
  // Without the library's choice: no tile line, and the residuals give the model's tiles.
  write({});
  const Result plain = run("calibrate '" + profile + "' --starts 2 -o '" + out + "' --residuals '" + residuals + "'");
  INFO("output: ", plain.output);
  REQUIRE(plain.status == 0);
  CHECK_FALSE(contains(plain.output, "tile choice"));
  std::vector<std::string> model_tiles;
  std::istringstream csv(slurp(residuals));
  std::string line;
  std::getline(csv, line);
  while (std::getline(csv, line)) {
    const std::vector<std::string> f = csv_fields(line);
    REQUIRE(f.size() >= 17);
    CHECK_FALSE(f[16].empty());  // the model's split-K
    model_tiles.push_back(f[15]);
  }
  REQUIRE(model_tiles.size() == 16);
  // The rows come back in profile order (fit set = every sample of a profile).
  std::vector<std::string> library = model_tiles;
  for (std::size_t i = 8; i < 16; ++i) library[i] = model_tiles[i] == "16x128" ? "32x128" : "16x128";
  write(library);
  const Result r = run("calibrate '" + profile + "' --starts 2 -o '" + out + "' --residuals '" + residuals + "'");
  INFO("output: ", r.output);
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "tile choice: the model picks the library's tile on 8 of 16 GEMMs (50.0%"));
  CHECK(contains(slurp(residuals), "," + library[8] + ",1,"));
  fs::remove(profile), fs::remove(residuals), fs::remove(out);
}

// The calibration loop closed: what `exasim calibrate` writes, `exasim kernel --calibration`
// reads back, and every measured row asked for as the table names it (--recipe) is predicted
// as the fit predicted it, to the last printed digit (the residuals' six), fitted and held out.
TEST_CASE("cli: calibrate, then kernel with the file and the table's recipe, gives the fit's own predictions") {
  namespace fs = std::filesystem;
  const std::string out = (fs::temp_directory_path() / "exasim_cli_roundtrip.yaml").string();
  const std::string residuals = (fs::temp_directory_path() / "exasim_cli_roundtrip.csv").string();
  const std::string table = std::string(EXASIM_TEST_DATA) + "/kernels-aic/h100_sxm_roundtrip/gemm_perf.csv";
  const Result fit = run("calibrate '" + table + "' --device H100-SXM5-80GB --starts 2 -o '" + out + "' --residuals '" +
                         residuals + "'");
  INFO("output: ", fit.output);
  REQUIRE(fit.status == 0);
  std::istringstream csv(slurp(residuals));
  std::string line;
  std::getline(csv, line);
  std::set<std::string> sets, formats;
  int rows = 0;
  double error_sum = 0;  // |exasim kernel / measured - 1| over the rows
  while (std::getline(csv, line)) {
    const std::vector<std::string> f = csv_fields(line);
    REQUIRE(f.size() >= 13);
    const std::string args = "kernel --gpu H100-SXM5-80GB --op gemm --recipe " + f[2] + " --m " + f[5] + " --n " + f[6] +
                             " --k " + f[7] + " --calibration '" + out + "' --clocks burst --json";  // the table's replays
    const Result k = run(args);
    INFO(args, "\n", k.output);
    REQUIRE(k.status == 0);
    std::ostringstream us;
    us.precision(6);  // as the residuals print it
    us << nlohmann::json::parse(k.output).at("time_s").get<double>() * 1e6;
    CHECK(us.str() == f[12]);
    error_sum += std::fabs(nlohmann::json::parse(k.output).at("time_s").get<double>() * 1e6 / std::stod(f[11]) - 1);
    sets.insert(f[0]), formats.insert(f[2]);
    ++rows;
  }
  CHECK(rows == 72);
  CHECK(sets == std::set<std::string>{"fit", "held_out"});
  CHECK(formats == std::set<std::string>{"bfloat16", "fp8", "fp8_block"});
  // --evaluate predicts the table on the file as exasim kernel does: its "all" error is the
  // rows' mean absolute error above, to the printed digit.
  const Result ev = run("calibrate '" + table + "' --device H100-SXM5-80GB --evaluate '" + out + "'");
  INFO(ev.output);
  REQUIRE(ev.status == 0);
  std::ostringstream mean;
  mean << std::fixed << std::setprecision(1) << 100 * error_sum / rows << "%";
  std::istringstream printed(ev.output);
  std::string all_row;
  for (std::string l; std::getline(printed, l);)
    if (l.starts_with("tile model  all")) all_row = l;
  CHECK(all_row.ends_with(mean.str()));
  // --evaluate --residuals: the same rows and predictions as the fit's residuals, set "evaluated".
  const std::string evaluated = residuals + ".evaluated.csv";
  REQUIRE(run("calibrate '" + table + "' --device H100-SXM5-80GB --evaluate '" + out + "' --residuals '" + evaluated + "'")
              .status == 0);
  auto predictions = [](const std::string& text) {
    std::multiset<std::string> out;  // line, measured, predicted of each row
    std::istringstream in(text);
    std::string row;
    std::getline(in, row);
    while (std::getline(in, row)) {
      const std::vector<std::string> f = csv_fields(row);
      out.insert(f[19] + "," + f[11] + "," + f[12]);
    }
    return out;
  };
  const std::string ev_csv = slurp(evaluated);
  CHECK(ev_csv.substr(0, ev_csv.find('\n')) == slurp(residuals).substr(0, slurp(residuals).find('\n')));
  CHECK(contains(ev_csv, "\nevaluated,"));
  CHECK(predictions(ev_csv) == predictions(slurp(residuals)));
  fs::remove(evaluated);
  CHECK(run("calibrate '" + table + "' --device H100-SXM5-80GB --evaluate /no/such.yaml").status != 0);
  fs::remove(out), fs::remove(residuals);
}

TEST_CASE("cli: kernel --recipe: the table's formats and recipes, refused where they do not apply") {
  auto time_of = [](const std::string& args) {
    const Result r = run("kernel --gpu H100-SXM5-80GB --op gemm --m 3584 --n 6144 --k 768 --json " + args);
    INFO(args, "\n", r.output);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.output);
  };
  const auto bare = time_of("--dtype fp8"), fp8 = time_of("--recipe fp8"), same = time_of("--dtype fp8 --recipe per_tensor");
  CHECK(fp8.at("dtype") == "fp8");
  CHECK(fp8.at("input_cast") == "per_tensor");
  CHECK(fp8.at("time_s").get<double>() == same.at("time_s").get<double>());
  // The cast is its own kernel before the GEMM: the bare GEMM plus the cast's time.
  CHECK(fp8.at("gemm_s").get<double>() == exasim::testing::approx(bare.at("time_s").get<double>()).epsilon(1e-12));
  CHECK(fp8.at("time_s").get<double>() ==
        exasim::testing::approx(bare.at("time_s").get<double>() + fp8.at("input_cast_s").get<double>()).epsilon(1e-12));
  CHECK(fp8.at("input_cast_s").get<double>() > 0);
  CHECK(time_of("--recipe fp8_block").at("recipe") == "block_scaled");
  CHECK(time_of("--recipe int4_wo").at("recipe") == "weight_only");
  check_clean_error(run("kernel --gpu H100-SXM5-80GB --op gemm --m 64 --n 64 --k 64 --recipe fp6"));
  check_clean_error(run("kernel --gpu H100-SXM5-80GB --op gemm --m 64 --n 64 --k 64 --recipe per_tensor"));  // bf16
  check_clean_error(run("kernel --gpu H100-SXM5-80GB --op gemm --m 64 --n 64 --k 64 --recipe fp8_block --dtype bf16"));
  check_clean_error(run("kernel --gpu H100-SXM5-80GB --op rmsnorm --rows 64 --cols 64 --recipe fp8"));
}

TEST_CASE("cli: calibrate errors are one clean line") {
  check_clean_error(run("calibrate /no/such_ops.csv"));
  check_clean_error(run("calibrate '" + kData + "a100_qwen_qwen-72b_ops.csv' --fit nobody -o /tmp/x.yaml"));
  check_clean_error(run("calibrate '" + kData + "README.md'"));
  // A table with nothing to fit is refused, not fitted on 0 samples (exit 0, a file written).
  const std::string bad = std::string(EXASIM_TEST_DATA) + "/kernels-aic/bad/";
  for (const char* table : {"header_only.csv", "gemm_zero_m.csv", "gemm_huge_m.csv", "gemm_extra_field.csv", "nccl_header_only.csv"}) {
    const Result r = run("calibrate '" + bad + table + "' -o /tmp/exasim_never_written.yaml");
    check_clean_error(r);
    CHECK(contains(r.output, table));  // the file (and line) it is about
  }
  CHECK_FALSE(std::filesystem::exists("/tmp/exasim_never_written.yaml"));
}

TEST_CASE("cli: kernel --clocks: burst, power-limited after the window, sustained throughout") {
  auto time_of = [](const std::string& clocks) {
    const Result r = run("kernel --gpu A100-SXM4-80GB --m 8192 --n 8192 --k 8192 --json --clocks " + clocks);
    INFO(clocks, "\n", r.output);
    REQUIRE(r.status == 0);
    CHECK(nlohmann::json::parse(r.output).at("clocks") == clocks);
    return nlohmann::json::parse(r.output).at("time_s").get<double>();
  };
  // ~4 ms of tensor-core work: at burst clocks; the same after the power window at the family's
  // sustained fraction (0.93 after 195 us; the A100 file keeps it); at that fraction throughout.
  const double burst = time_of("burst"), limited = time_of("power-limited"), sustained = time_of("sustained");
  CHECK(limited > 1.05 * burst);
  CHECK(sustained > limited);
  CHECK(sustained < 1.01 * burst / 0.9278 + 1e-5);
  const Result bad = run("kernel --gpu A100-SXM4-80GB --m 8192 --n 8192 --k 8192 --clocks boost");
  CHECK(bad.status != 0);
  CHECK(bad.output.find("--clocks") != std::string::npos);
}

TEST_CASE("cli: kernel --op moe: the rank's experts, its parts, and the table's rows as calibrate predicts them") {
  const std::string shape = "kernel --gpu H100-SXM5-80GB --op moe --hidden 2048 --ffn 512 --experts 256 --top-k 8 --clocks burst";
  // One token of a top-8 router: eight experts' weights, one copy each.
  const auto one = run_json(shape + " --tokens 1");
  CHECK(one["active_experts"].get<double>() == 8);
  CHECK(one["routed_tokens"].get<double>() == 8);
  double parts = 0;
  for (const char* k : {"route_s", "permute_s", "up_s", "act_s", "down_s", "finalize_s"}) parts += one[k].get<double>();
  CHECK(parts == exasim::testing::approx(one["time_s"].get<double>()));
  // H100 measured 41.84 us for this row (kernels-aic moe_perf, balanced, one rank).
  CHECK(one["time_s"].get<double>() == exasim::testing::approx(41.84e-6).epsilon(0.15));
  // Over 8 ranks the busiest under the power-law skew does more than its balanced share.
  const auto even = run_json(shape + " --tokens 4096 --ep 8");
  const auto skew = run_json(shape + " --tokens 4096 --ep 8 --routing power_law_1.2");
  CHECK(even["routed_tokens"].get<double>() == 4096);
  CHECK(skew["routed_tokens"].get<double>() > 4096);
  CHECK(skew["time_s"].get<double>() > even["time_s"].get<double>());
  // The table's recipe: fp8 operands halve the gathered copies' bytes.
  const auto fp8 = run_json(shape + " --tokens 4096 --recipe fp8");
  CHECK(fp8["dtype"] == "fp8");
  // calibrate --format aic-moe predicts the table on the GPU's own file, fitting nothing.
  const Result c = run("calibrate --format aic-moe '" + std::string(EXASIM_TEST_DATA) +
                       "/kernels-aic/h100_sxm/moe_perf.csv' --device H100-SXM5-80GB");
  INFO(c.output);
  CHECK(c.status == 0);
  CHECK(contains(c.output, "7 MoE calls read"));
  CHECK(contains(c.output, "1 rows of w4a16_mxfp4 (no GEMM recipe for that format) left out"));
  CHECK(contains(c.output, "h100-sxm5-80gb-aic.yaml"));
  CHECK(contains(c.output, "moe bfloat16 balanced"));
  // Refusals: one clean line naming the option.
  for (const auto& [args, option] : std::vector<std::pair<std::string, std::string>>{
           {" --tokens 16 --ep 3", "--ep"},
           {" --tokens 16 --moe-tp 3", "--moe-tp"},
           {" --tokens 16 --routing zipf", "--routing"},
           {" --tokens 0", "--tokens"},
           {" --tokens 16 --top-k 300", "--top-k"}}) {
    const Result r = run(shape + args);
    check_clean_error(r);
    CHECK(contains(r.output, option));
  }
}
