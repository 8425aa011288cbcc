#pragma once
// Synthetic requests: an arrival process, prompt/output length distributions and a count, all
// drawn from one RNG seeded at construction, so the same seed gives the same requests.
#include <cstdint>
#include <memory>

#include "hw/config/node.hpp"
#include "workloads/serving/arrival_process.hpp"
#include "workloads/serving/length_distribution.hpp"
#include "workloads/serving/request.hpp"

namespace exasim::workloads::serving {

class SyntheticSource final : public RequestSource {
 public:
  SyntheticSource(std::unique_ptr<ArrivalProcess> arrivals, RequestLengths lengths, std::int64_t count,
                  std::uint64_t seed);
  // Ids run 0, 1, ...; each request draws its arrival, then its prompt and output lengths.
  std::optional<Request> next() override;
  std::string describe() const override;

 private:
  std::unique_ptr<ArrivalProcess> arrivals_;
  RequestLengths lengths_;
  std::int64_t count_;
  std::int64_t issued_ = 0;
  Rng rng_;
};

// From the workload mapping {arrival: NAME, <its keys>, requests: N, prompt_tokens: L, output_tokens: L}.
// Unknown keys are ConfigErrors naming the key. `load` reads length files for empirical lengths.
std::unique_ptr<RequestSource> make_synthetic_source(const config::Node& workload, std::uint64_t seed,
                                                     const LengthTableLoader& load);

}  // namespace exasim::workloads::serving
