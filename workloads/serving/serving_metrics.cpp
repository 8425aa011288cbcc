#include "workloads/serving/serving_metrics.hpp"

#include <algorithm>

namespace exasim::workloads::serving {

const RequestRecord& ServingMetrics::complete(const Sequence& s, int replica) {
  RequestRecord& r = last_;
  r = RequestRecord{};
  r.id = s.req.id;
  r.arrival_s = s.req.arrival_s;
  r.prompt_tokens = s.req.prompt_tokens;
  r.output_tokens = s.generated;
  r.replica = replica;
  r.prefill_replica = s.prefill_replica;
  r.queueing_s = s.first_scheduled_s - s.req.arrival_s;
  r.ttft_s = s.first_token_s - s.req.arrival_s;
  r.e2e_s = s.last_token_s - s.req.arrival_s;
  r.finish_s = s.last_token_s;
  if (s.generated > 1) r.tpot_s = (s.last_token_s - s.first_token_s) / static_cast<double>(s.generated - 1);
  r.preemptions = s.preemptions;
  r.prefix_hit_tokens = s.prefix_hit_tokens;
  r.kv_transfer_bytes = s.kv_transfer_bytes;
  r.slo_met = (slo_.ttft_s <= 0 || r.ttft_s <= slo_.ttft_s) && (slo_.tpot_s <= 0 || r.tpot_s <= slo_.tpot_s);

  if (completed_ == 0 || r.arrival_s < first_arrival_) first_arrival_ = r.arrival_s;
  last_finish_ = std::max(last_finish_, r.finish_s);
  ++completed_;
  slo_met_ += r.slo_met ? 1 : 0;
  input_tokens_ += static_cast<double>(r.prompt_tokens);
  output_tokens_ += static_cast<double>(r.output_tokens);
  prefix_hit_tokens_ += static_cast<double>(r.prefix_hit_tokens);
  kv_transfer_bytes_ += r.kv_transfer_bytes;
  queueing_.add(r.queueing_s);
  ttft_.add(r.ttft_s);
  e2e_.add(r.e2e_s);
  if (r.output_tokens > 1) tpot_.add(r.tpot_s);
  if (sink_) sink_(r);
  return r;
}

}  // namespace exasim::workloads::serving
