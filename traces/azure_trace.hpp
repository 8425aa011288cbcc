#pragma once
// Replays an Azure LLM inference trace (Azure/AzurePublicDataset): CSV with
// TIMESTAMP,ContextTokens,GeneratedTokens. Both published formats are read: 2023 timestamps with
// 7 fractional digits ("2023-11-16 18:17:03.9799600") and 2024 ones with mixed sub-second
// precision and an offset ("2024-05-10 00:00:01.05+00:00"). Arrival = seconds since the first row.
#include <string>

#include "traces/csv_reader.hpp"
#include "traces/trace_clock.hpp"
#include "workloads/serving/request.hpp"

namespace exasim::traces {

class AzureTraceSource final : public workloads::serving::RequestSource {
 public:
  explicit AzureTraceSource(const std::string& path);
  std::optional<workloads::serving::Request> next() override;
  std::string describe() const override;

 private:
  CsvReader csv_;
  CsvReader::Column time_, prompt_, output_;
  TraceClock clock_;
  std::uint64_t next_id_ = 0;
};

}  // namespace exasim::traces
