#include "traces/azure_trace.hpp"

#include <filesystem>

#include "traces/civil_time.hpp"

namespace exasim::traces {

AzureTraceSource::AzureTraceSource(const std::string& path)
    : csv_(path),
      time_(csv_.column("TIMESTAMP")),
      prompt_(csv_.column("ContextTokens")),
      output_(csv_.column("GeneratedTokens")) {}

std::optional<workloads::serving::Request> AzureTraceSource::next() {
  if (!csv_.next()) return std::nullopt;
  std::string why;
  const auto ns = parse_timestamp_ns(csv_.text(time_), &why);
  if (!ns) csv_.fail(time_, "cannot read timestamp \"" + std::string(csv_.text(time_)) + "\": " + why);
  if (!clock_.accept(*ns)) csv_.fail(time_, clock_.backwards_message(), "sort the file by TIMESTAMP");
  workloads::serving::Request r;
  r.id = next_id_++;
  r.arrival_s = clock_.arrival_s();
  r.prompt_tokens = csv_.tokens(prompt_);
  r.output_tokens = csv_.tokens(output_);
  return r;
}

std::string AzureTraceSource::describe() const {
  return "azure trace " + std::filesystem::path(csv_.path()).filename().string();
}

}  // namespace exasim::traces
