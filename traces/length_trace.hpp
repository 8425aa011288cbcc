#pragma once
// Length-statistics CSVs (num_prefill_tokens,num_decode_tokens,... as in the Vidur/Splitwise
// data): prompt and output lengths with no timestamps. Replayed row by row with arrivals from an
// arrival process, or loaded whole as a table to sample lengths from.
#include <memory>
#include <string>

#include "traces/csv_reader.hpp"
#include "workloads/serving/arrival_process.hpp"
#include "workloads/serving/length_distribution.hpp"
#include "workloads/serving/request.hpp"

namespace exasim::traces {

class LengthTraceSource final : public workloads::serving::RequestSource {
 public:
  // Rows in file order; the i-th request arrives at the i-th time of `arrivals`, drawn from an
  // RNG seeded with `seed`.
  LengthTraceSource(const std::string& path, std::unique_ptr<workloads::serving::ArrivalProcess> arrivals,
                    std::uint64_t seed);
  std::optional<workloads::serving::Request> next() override;
  std::string describe() const override;

 private:
  CsvReader csv_;
  CsvReader::Column prompt_, output_;
  std::unique_ptr<workloads::serving::ArrivalProcess> arrivals_;
  workloads::serving::Rng rng_;
  std::uint64_t next_id_ = 0;
};

// Every row of a length-statistics file, for empirical length sampling. A ConfigError if the file
// has no rows.
std::shared_ptr<const workloads::serving::LengthTable> load_length_table(const std::string& path);

}  // namespace exasim::traces
