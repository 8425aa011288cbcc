#include "traces/burstgpt_trace.hpp"

#include <filesystem>

#include "traces/civil_time.hpp"

namespace exasim::traces {

BurstGptTraceSource::BurstGptTraceSource(const std::string& path, BurstGptOptions options)
    : csv_(path),
      options_(std::move(options)),
      time_(csv_.column("Timestamp")),
      model_(csv_.column("Model")),
      prompt_(csv_.column("Request tokens")),
      output_(csv_.column("Response tokens")) {}

std::optional<workloads::serving::Request> BurstGptTraceSource::next() {
  while (csv_.next()) {
    // Every row is checked, including those the filters drop: a broken file is reported, not skipped.
    std::string why;
    const auto ns = parse_seconds_ns(csv_.text(time_), &why);
    if (!ns) csv_.fail(time_, "cannot read \"" + std::string(csv_.text(time_)) + "\" as seconds: " + why);
    if (!clock_.accept(*ns)) csv_.fail(time_, clock_.backwards_message(), "sort the file by Timestamp");
    const std::int64_t prompt = csv_.tokens(prompt_);
    const std::int64_t output = csv_.tokens(output_);
    const std::string_view model = csv_.text(model_);
    if (output == 0 && !options_.keep_failed) continue;
    if (!options_.model.empty() && model != options_.model) continue;
    workloads::serving::Request r;
    r.id = next_id_++;
    r.arrival_s = clock_.arrival_s();
    r.prompt_tokens = prompt;
    r.output_tokens = output;
    return r;
  }
  return std::nullopt;
}

std::string BurstGptTraceSource::describe() const {
  std::string d = "burstgpt trace " + std::filesystem::path(csv_.path()).filename().string();
  if (!options_.model.empty()) d += ", model " + options_.model;
  return d + (options_.keep_failed ? ", failed requests kept" : ", failed requests dropped");
}

}  // namespace exasim::traces
