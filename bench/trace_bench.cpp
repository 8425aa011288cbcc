// Request-source speed and memory: rows per second for the real Azure conversation trace (19,366
// rows) and the Mooncake conversation trace, 1 M synthetic requests, and the peak resident memory
// while streaming generated Azure-format traces of growing length (it must stay flat: readers
// never hold the file). Usage: exasim-trace-bench [DATA_DIR] (default ../shared/data/traces next
// to the source tree). Prints one line per measurement; always exits 0.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "peak_memory.hpp"
#include "traces/azure_trace.hpp"
#include "traces/mooncake_trace.hpp"
#include "workloads/serving/synthetic_source.hpp"

namespace serving = exasim::workloads::serving;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

using exasim::benchmarks::max_rss_mib;

// Reads `source` to the end; returns the count and folds the values into *sum so nothing is optimized away.
std::int64_t drain(serving::RequestSource& source, double* sum) {
  std::int64_t n = 0;
  while (auto r = source.next()) {
    ++n;
    *sum += r->arrival_s + static_cast<double>(r->prompt_tokens + r->output_tokens);
  }
  return n;
}

template <class Make>
void rate(const char* name, int repeats, Make make) {
  double sum = 0;
  std::int64_t rows = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < repeats; ++i) {
    auto src = make();
    rows += drain(*src, &sum);
  }
  const double s = seconds_since(t0);
  std::printf("%-34s rows=%-9lld time=%.3f s  rate=%.2f M rows/s  (checksum %.6g)\n", name,
              static_cast<long long>(rows / repeats), s, static_cast<double>(rows) / s / 1e6, sum);
}

// An Azure 2023-format file of `rows` rows, 0.2 s apart from 2023-11-01 (up to 12 M rows stay within
// November), written through the C library's small buffer.
void write_azure(const std::string& path, std::int64_t rows) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return;
  std::fputs("TIMESTAMP,ContextTokens,GeneratedTokens\r\n", f);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t t = i * 2'000'000;  // in 100 ns ticks: 0.2 s apart
    const std::int64_t secs = t / 10'000'000, ticks = t % 10'000'000;
    const std::int64_t day = secs / 86400, hh = secs / 3600 % 24, mm = secs / 60 % 60, ss = secs % 60;
    std::fprintf(f, "2023-11-%02lld %02lld:%02lld:%02lld.%07lld,%lld,%lld\r\n", static_cast<long long>(1 + day),
                 static_cast<long long>(hh), static_cast<long long>(mm), static_cast<long long>(ss),
                 static_cast<long long>(ticks), static_cast<long long>(100 + i % 4000),
                 static_cast<long long>(1 + i % 700));
  }
  std::fclose(f);
}

void flat_memory() {
  const auto dir = std::filesystem::temp_directory_path();
  for (std::int64_t rows : {100'000LL, 1'000'000LL, 5'000'000LL}) {
    const std::string path = (dir / ("exasim_trace_bench_" + std::to_string(rows) + ".csv")).string();
    write_azure(path, rows);
    const double before = max_rss_mib();
    const auto t0 = Clock::now();
    double sum = 0;
    exasim::traces::AzureTraceSource src(path);
    const std::int64_t n = drain(src, &sum);
    const double s = seconds_since(t0);
    std::printf("azure-format %-8lld rows (%4.0f MiB file): %.3f s  %.2f M rows/s  peak RSS before %.1f MiB, after %.1f MiB\n",
                static_cast<long long>(n), static_cast<double>(std::filesystem::file_size(path)) / (1 << 20), s,
                static_cast<double>(n) / s / 1e6, before, max_rss_mib());
    std::filesystem::remove(path);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string data = argc > 1 ? argv[1] : std::string(EXASIM_SOURCE_DIR) + "/../shared/data/traces";
  const std::string azure = data + "/AzureLLMInferenceTrace_conv.csv";
  const std::string mooncake = data + "/mooncake_conversation.jsonl";
  std::printf("peak RSS at start: %.1f MiB\n", max_rss_mib());
  if (std::filesystem::exists(azure)) {
    rate("azure conv trace (x50)", 50, [&] { return std::make_unique<exasim::traces::AzureTraceSource>(azure); });
  } else {
    std::printf("skipped: %s not found\n", azure.c_str());
  }
  if (std::filesystem::exists(mooncake)) {
    rate("mooncake conversation (x10)", 10, [&] {
      return std::make_unique<exasim::traces::MooncakeTraceSource>(mooncake, exasim::traces::MooncakeOptions{});
    });
    rate("mooncake conversation, jitter (x10)", 10, [&] {
      return std::make_unique<exasim::traces::MooncakeTraceSource>(mooncake, exasim::traces::MooncakeOptions{3.0, 1});
    });
  }
  rate("synthetic poisson + lognormal (1M)", 1, [] {
    return std::make_unique<serving::SyntheticSource>(
        serving::poisson_arrivals(100),
        serving::RequestLengths(serving::lognormal_length(800, 3000, 32768), serving::lognormal_length(200, 600, 4096)),
        1'000'000, 1);
  });
  rate("synthetic gamma cv 2 + uniform (1M)", 1, [] {
    return std::make_unique<serving::SyntheticSource>(
        serving::gamma_arrivals(100, 2), serving::RequestLengths(serving::uniform_length(1, 4000), serving::fixed_length(256)),
        1'000'000, 1);
  });
  flat_memory();
  return 0;
}
