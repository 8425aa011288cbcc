#pragma once
// What a serving run measures, per request and in aggregate. Definitions (as vLLM's and
// DistServe's benchmarks use them):
//   queueing delay  arrival -> first scheduled in an iteration
//   TTFT            arrival -> first output token
//   TPOT            (last token - first token) / (output tokens - 1), per request
//   ITL             gap between consecutive token emissions of a request (every gap is a sample)
//   E2E             arrival -> last token
//   SLO met         TTFT <= slo.ttft and TPOT <= slo.tpot (a limit of 0 is no limit)
//   goodput         requests that met the SLO per second of the run
// Aggregates live in constant memory (latency_histogram.hpp); per-request records go to an
// optional sink (the --requests CSV) as requests finish.
#include <cstdint>
#include <functional>

#include "workloads/serving/latency_histogram.hpp"
#include "workloads/serving/sequence.hpp"
#include "workloads/serving/serving_config.hpp"

namespace exasim::workloads::serving {

struct RequestRecord {
  std::uint64_t id = 0;
  double arrival_s = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  int replica = 0;          // where it decoded (mixed or decode pool)
  int prefill_replica = -1; // disaggregation: where it was prefilled
  double queueing_s = 0;
  double ttft_s = 0;
  double tpot_s = 0;        // 0 for a single output token
  double e2e_s = 0;
  double finish_s = 0;
  int preemptions = 0;
  std::int64_t prefix_hit_tokens = 0;
  double kv_transfer_bytes = 0;
  bool slo_met = false;
};

class ServingMetrics {
 public:
  explicit ServingMetrics(SloConfig slo) : slo_(slo) {}

  void add_token_gap(double seconds) { itl_.add(seconds); }
  // Records a finished sequence; returns its record (also handed to the sink, if any).
  const RequestRecord& complete(const Sequence& s, int replica);
  void set_sink(std::function<void(const RequestRecord&)> sink) { sink_ = std::move(sink); }

  std::uint64_t completed() const { return completed_; }
  std::uint64_t slo_met() const { return slo_met_; }
  double input_tokens() const { return input_tokens_; }
  double output_tokens() const { return output_tokens_; }
  double prefix_hit_tokens() const { return prefix_hit_tokens_; }
  double kv_transfer_bytes() const { return kv_transfer_bytes_; }
  double first_arrival_s() const { return first_arrival_; }
  double last_finish_s() const { return last_finish_; }
  const LatencyHistogram& ttft() const { return ttft_; }
  const LatencyHistogram& tpot() const { return tpot_; }
  const LatencyHistogram& itl() const { return itl_; }
  const LatencyHistogram& e2e() const { return e2e_; }
  const LatencyHistogram& queueing() const { return queueing_; }

 private:
  SloConfig slo_;
  LatencyHistogram ttft_, tpot_, itl_, e2e_, queueing_;
  std::function<void(const RequestRecord&)> sink_;
  RequestRecord last_;
  std::uint64_t completed_ = 0;
  std::uint64_t slo_met_ = 0;
  double input_tokens_ = 0;
  double output_tokens_ = 0;
  double prefix_hit_tokens_ = 0;
  double kv_transfer_bytes_ = 0;
  double first_arrival_ = 0;
  double last_finish_ = 0;
};

}  // namespace exasim::workloads::serving
