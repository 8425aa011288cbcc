#pragma once
// A request while a replica serves it: how far its prefill and decode have come, the KV it
// holds, and the times the metrics need. Token bookkeeping: a prompt of P tokens is prefilled
// (computed goes 0 -> P) and the prefill samples the first output token; every decode step feeds
// the last output token (its KV is appended) and samples the next. So in the decode phase
// computed = P + generated - 1. A sequence preempted by recompute re-prefills P + generated.
#include <cstdint>
#include <vector>

#include "workloads/serving/request.hpp"

namespace exasim::workloads::serving {

using SeqId = std::uint32_t;

enum class SeqState : std::uint8_t { kWaiting, kRunning, kSwapped, kTransferring, kDone };

struct Sequence {
  Request req;
  std::vector<std::uint64_t> prefix_keys;  // chained keys of the prompt's full prefix units
  std::int64_t computed = 0;        // tokens whose KV is in the cache
  std::int64_t prefill_target = 0;  // tokens to compute before the next sample that ends a prefill
  std::int64_t generated = 0;       // output tokens emitted
  std::int64_t own_blocks = 0;      // KV blocks of its own
  std::int64_t shared_units = 0;    // leading prefix units held in the shared prefix cache
  std::int64_t swapped_blocks = 0;  // blocks parked in host memory (swap preemption)
  std::int64_t prefix_hit_tokens = 0;
  double first_scheduled_s = -1;
  double first_token_s = -1;
  double last_token_s = -1;
  double kv_transfer_bytes = 0;     // disaggregation: prompt KV moved from the prefill pool
  double spec_credit = 0;           // speculative decoding: fractional accepted tokens carried
  int preemptions = 0;
  int prefill_replica = -1;         // disaggregation: where the prompt was prefilled
  bool kv_ready = false;            // arrived with its prompt's KV (decode pool)
  SeqState state = SeqState::kWaiting;

  bool prefilling() const { return computed < prefill_target; }
  std::int64_t remaining_prefill() const { return prefill_target - computed; }
};

}  // namespace exasim::workloads::serving
