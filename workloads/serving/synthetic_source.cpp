#include "workloads/serving/synthetic_source.hpp"

namespace exasim::workloads::serving {

SyntheticSource::SyntheticSource(std::unique_ptr<ArrivalProcess> arrivals, RequestLengths lengths,
                                 std::int64_t count, std::uint64_t seed)
    : arrivals_(std::move(arrivals)), lengths_(std::move(lengths)), count_(count), rng_(seed) {}

std::optional<Request> SyntheticSource::next() {
  if (issued_ >= count_) return std::nullopt;
  Request r;
  r.id = static_cast<std::uint64_t>(issued_++);
  r.arrival_s = arrivals_->next(rng_);
  const auto [prompt, output] = lengths_.sample(rng_);
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

std::string SyntheticSource::describe() const {
  return "synthetic: " + std::to_string(count_) + " requests, " + arrivals_->describe() + ", " + lengths_.describe();
}

std::unique_ptr<RequestSource> make_synthetic_source(const config::Node& workload, std::uint64_t seed,
                                                     const LengthTableLoader& load) {
  workload.expect_map();
  const ArrivalKind& kind = find_arrival_process(workload.required("arrival"));
  std::vector<std::string> allowed = {"arrival", "requests", "prompt_tokens", "output_tokens"};
  allowed.insert(allowed.end(), kind.keys.begin(), kind.keys.end());
  workload.check_keys(allowed);
  const long long count = workload.required("requests").as_positive_int();
  RequestLengths lengths = make_request_lengths(workload.required("prompt_tokens"), workload.required("output_tokens"), load);
  return std::make_unique<SyntheticSource>(kind.make(workload), std::move(lengths), count, seed);
}

}  // namespace exasim::workloads::serving
