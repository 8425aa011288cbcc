#include "traces/length_trace.hpp"

#include <filesystem>

#include "hw/error.hpp"

namespace exasim::traces {

namespace {
const char* const kPromptColumn = "num_prefill_tokens";
const char* const kOutputColumn = "num_decode_tokens";
}  // namespace

LengthTraceSource::LengthTraceSource(const std::string& path,
                                     std::unique_ptr<workloads::serving::ArrivalProcess> arrivals, std::uint64_t seed)
    : csv_(path),
      prompt_(csv_.column(kPromptColumn)),
      output_(csv_.column(kOutputColumn)),
      arrivals_(std::move(arrivals)),
      rng_(seed) {}

std::optional<workloads::serving::Request> LengthTraceSource::next() {
  if (!csv_.next()) return std::nullopt;
  workloads::serving::Request r;
  r.prompt_tokens = csv_.tokens(prompt_);
  r.output_tokens = csv_.tokens(output_);
  r.id = next_id_++;
  r.arrival_s = arrivals_->next(rng_);
  return r;
}

std::string LengthTraceSource::describe() const {
  return "length trace " + std::filesystem::path(csv_.path()).filename().string() + ", " + arrivals_->describe();
}

std::shared_ptr<const workloads::serving::LengthTable> load_length_table(const std::string& path) {
  CsvReader csv(path);
  const auto prompt = csv.column(kPromptColumn), output = csv.column(kOutputColumn);
  auto table = std::make_shared<workloads::serving::LengthTable>();
  table->source = std::filesystem::path(path).filename().string();
  while (csv.next()) {
    table->prompt.push_back(csv.tokens(prompt));
    table->output.push_back(csv.tokens(output));
  }
  if (table->prompt.empty()) {
    throw ConfigError("the length file has a header but no rows", SourceLocation{path, 2, ""},
                      "empirical lengths need at least one row");
  }
  return table;
}

}  // namespace exasim::traces
