#pragma once
// Replays a BurstGPT trace (HPMLL/BurstGPT): CSV with Timestamp (seconds from day 0), Model,
// Request tokens, Response tokens, Total tokens, Log Type. A failed request has Response tokens = 0;
// it is dropped unless kept on request (then it arrives with output_tokens = 0). Arrival = seconds
// since the first row of the file, whichever model that row is for, so filtering keeps the
// trace's own time axis.
#include <string>

#include "traces/csv_reader.hpp"
#include "traces/trace_clock.hpp"
#include "workloads/serving/request.hpp"

namespace exasim::traces {

struct BurstGptOptions {
  bool keep_failed = false;
  std::string model;  // only rows of this Model ("ChatGPT", "GPT-4"); empty = every row
};

class BurstGptTraceSource final : public workloads::serving::RequestSource {
 public:
  BurstGptTraceSource(const std::string& path, BurstGptOptions options);
  std::optional<workloads::serving::Request> next() override;
  std::string describe() const override;

 private:
  CsvReader csv_;
  BurstGptOptions options_;
  CsvReader::Column time_, model_, prompt_, output_;
  TraceClock clock_;
  std::uint64_t next_id_ = 0;
};

}  // namespace exasim::traces
