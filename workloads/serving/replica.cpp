#include "workloads/serving/replica.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/serving/serving_metrics.hpp"

namespace exasim::workloads::serving {

Replica::Replica(ReplicaSetup setup, IterationCostModel cost, ServingMetrics* metrics)
    : setup_(std::move(setup)),
      cost_(std::move(cost)),
      metrics_(metrics),
      state_(KvBlockManager(setup_.kv_blocks, setup_.block_tokens, setup_.watermark), setup_.limits),
      scheduler_(find_batch_scheduler(setup_.scheduler)->make(setup_.limits)) {
  if (setup_.speculative) spec_tokens_per_step_ = setup_.speculative->expected_tokens_per_step();
  if (setup_.kv_window > 0) state_.blocks().set_sliding_window(setup_.kv_full_layer_fraction, setup_.kv_window);
}

Sequence Replica::fresh(Request r) const {
  Sequence s;
  s.prefill_target = r.prompt_tokens;
  s.req = std::move(r);
  return s;
}

void Replica::add(Request r) {
  // Prompts beyond the model's context are refused, as vLLM refuses prompts over max_model_len.
  const std::int64_t limit = cost_.inputs().model.max_seq_len;
  if (limit > 0 && r.prompt_tokens > limit) {
    state_.count_rejected_arrival();
    return;
  }
  const SeqId id = state_.insert(fresh(std::move(r)));
  state_.waiting().push_back(id);
}

void Replica::add_prefilled(Sequence s) {
  s.kv_ready = true;
  s.own_blocks = s.shared_units = s.swapped_blocks = 0;
  s.prefix_keys.clear();
  s.state = SeqState::kWaiting;
  const SeqId id = state_.insert(std::move(s));
  state_.waiting().push_back(id);
}

std::int64_t Replica::prefix_match_tokens(const Request& r) const {
  const std::int64_t unit = state_.prefix_unit_tokens();
  if (unit == 0 || r.prefix_blocks.empty() || r.prefix_block_tokens != unit) return 0;
  const std::size_t full = std::min<std::size_t>(r.prefix_blocks.size(), static_cast<std::size_t>(r.prompt_tokens / unit));
  std::vector<std::uint64_t> keys(full);
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < full; ++i) keys[i] = key = chain_prefix_key(key, r.prefix_blocks[i]);
  return state_.blocks().match(keys.data(), static_cast<std::int64_t>(full)) * unit;
}

void Replica::build_shape() {
  shape_.prefills.clear();
  shape_.decodes = shape_.decode_context = shape_.decode_window_context = shape_.sampled = 0;
  const double step = setup_.limits.step_tokens;
  const auto window = static_cast<double>(cost_.inputs().model.sliding_window);
  for (const ScheduledWork& w : batch_.items) {
    const Sequence& s = state_.seq(w.seq);
    if (w.prefill) {
      shape_.prefills.push_back({static_cast<double>(w.tokens), static_cast<double>(s.computed)});
      if (s.computed + w.tokens >= s.prefill_target) shape_.sampled += 1;
    } else {
      shape_.decodes += 1;
      const double context = static_cast<double>(s.computed) + step;
      shape_.decode_context += context;
      shape_.decode_window_context += window > 0 ? std::min(context, window) : context;
      shape_.sampled += step;
    }
  }
  const double block_bytes = setup_.kv_bytes_per_token_per_gpu * setup_.block_tokens;
  shape_.swap_bytes = static_cast<double>(batch_.swap_in_blocks + batch_.swap_out_blocks) * block_bytes;
}

std::optional<double> Replica::start_iteration(double now) {
  if (busy_) return std::nullopt;
  scheduler_->schedule(state_, now, batch_);
  for (const SeqId id : state_.rejected_ids()) state_.erase(id);
  state_.rejected_ids().clear();
  if (batch_.items.empty()) return std::nullopt;
  build_shape();
  const IterationTime it = cost_.time(shape_);
  const double duration = it.total;
  stats_.linear_s += it.linear;
  stats_.attention_s += it.attention;
  stats_.cpu_s += it.cpu;
  stats_.decode_seq_iterations += shape_.decodes;
  const KvBlockManager& kv = state_.blocks();
  const double util = kv.total_blocks() > 0 ? static_cast<double>(kv.used_blocks()) / static_cast<double>(kv.total_blocks()) : 0;
  stats_.kv_peak_utilization = std::max(stats_.kv_peak_utilization, util);
  stats_.kv_utilization_time += util * duration;
  stats_.busy_s += duration;
  ++stats_.iterations;
  busy_ = true;
  iteration_start_ = now;
  return duration;
}

void Replica::emit(Sequence& s, double now, std::int64_t tokens) {
  if (s.first_token_s < 0) s.first_token_s = now;
  else if (metrics_) metrics_->add_token_gap(now - s.last_token_s);
  s.generated += tokens;
  s.last_token_s = now;
}

void Replica::complete(SeqId id) {
  state_.release_kv(id);
  Sequence& s = state_.seq(id);
  s.state = SeqState::kDone;
  finished_.push_back(std::move(s));
  state_.erase(id);
}

void Replica::finish_iteration(double now) {
  busy_ = false;
  for (const ScheduledWork& w : batch_.items) {
    Sequence& s = state_.seq(w.seq);
    if (s.state != SeqState::kRunning) continue;
    if (w.prefill) {
      s.computed += w.tokens;
      stats_.prefill_tokens += w.tokens;
      if (s.prefilling()) continue;
      state_.publish_prefix(w.seq);
      emit(s, now, 1);
    } else {
      std::int64_t n = 1;
      if (setup_.speculative) {  // accepted draft tokens plus the target's own, in expectation
        const double total = s.spec_credit + spec_tokens_per_step_;
        n = static_cast<std::int64_t>(std::floor(total));
        s.spec_credit = total - static_cast<double>(n);
      }
      n = std::max<std::int64_t>(1, std::min(n, s.req.output_tokens - s.generated));
      s.computed += n;
      stats_.decode_tokens += n;
      emit(s, now, n);
    }
    if (s.generated >= s.req.output_tokens) {
      s.state = SeqState::kDone;  // completed below, after the running list is compacted
    } else if (setup_.role == PoolRole::kPrefill) {
      s.state = SeqState::kTransferring;
      handoffs_.push_back(w.seq);
    }
  }
  auto& run = state_.running();
  std::vector<SeqId>& done = done_scratch_;
  done.clear();
  std::size_t keep = 0;
  for (const SeqId id : run) {
    const SeqState st = state_.seq(id).state;
    if (st == SeqState::kRunning) run[keep++] = id;
    else if (st == SeqState::kDone) done.push_back(id);
  }
  run.resize(keep);
  for (const SeqId id : done) complete(id);
}

void Replica::release(SeqId id) {
  state_.release_kv(id);
  state_.erase(id);
}

}  // namespace exasim::workloads::serving
