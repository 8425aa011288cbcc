#include "workloads/planner/memory_estimate.hpp"

#include <algorithm>

#include "models/memory/model_state_memory.hpp"
#include "workloads/planner/plan_space.hpp"
#include "workloads/training/offload_costs.hpp"
#include "workloads/training/pipeline_schedule.hpp"
#include "workloads/training/training_memory.hpp"

namespace exasim::workloads::planner {

ModelNumbers ModelNumbers::of(const ModelSpec& m) {
  ModelNumbers n;
  n.layers = m.layers;
  n.moe = m.moe.has_value();
  n.dense_leading = m.moe ? std::min(m.moe->dense_layers, m.layers) : m.layers;
  n.dense_layer = m.layer_parameter_count();
  if (m.moe) {
    n.routed_base = m.layer_base_parameter_count();
    n.routed_whole = m.router_parameter_count() + m.moe->shared_experts * m.expert_parameter_count();
    n.routed_experts = m.moe->experts * m.expert_parameter_count();
  }
  n.embed_params = m.embedding_parameter_count();
  n.head_params = m.head_parameter_count();
  n.tied_copy_params = m.tied_embeddings ? static_cast<double>(m.vocab * m.hidden) : 0;
  n.hidden = static_cast<double>(m.hidden);
  n.vocab = static_cast<double>(m.vocab);
  n.model = m;
  return n;
}

double ModelNumbers::range_dense(int first, int count, int tp) const {
  const int dense = std::clamp(dense_leading - first, 0, count);
  return dense * dense_layer / tp + (count - dense) * (routed_base / tp + routed_whole);
}

double ModelNumbers::range_experts(int first, int count, int ep, int etp) const {
  const int dense = std::clamp(dense_leading - first, 0, count);
  return (count - dense) * routed_experts / (ep * etp);
}

StageWeights stage_weights(const ModelNumbers& m, const Candidate& c, int stage, int shard_group) {
  StageWeights w;
  int first = 0;  // of virtual stage v: the layers of the ones before it
  for (int v = 0; v < c.pp * c.vpp; ++v) {
    const int n = virtual_stage_layers(c, m.layers, v);
    if (v % c.pp == stage) {
      w.layers += n;
      w.widest_chunk = std::max(w.widest_chunk, n);
      w.dense += m.range_dense(first, n, c.tp);
      w.experts += m.range_experts(first, n, c.ep, c.etp);
      // Its dense layers and routed ones (their dense part and their experts): whole, and where sharded.
      const bool dense_sharded = shard_size(c, shard_group) > 1, experts_sharded = expert_shard_size(c, shard_group) > 1;
      const double dense_layer = m.dense_layer / c.tp, routed_dense = m.routed_base / c.tp + m.routed_whole,
                   routed_experts = m.routed_experts / (c.ep * c.etp);
      if (n > 0 && first < m.dense_leading) {
        w.widest_layer = std::max(w.widest_layer, dense_layer);
        if (dense_sharded) w.widest_sharded_layer = std::max(w.widest_sharded_layer, dense_layer);
      }
      if (n > 0 && first + n > m.dense_leading) {
        w.widest_layer = std::max(w.widest_layer, routed_dense + routed_experts);
        w.widest_sharded_layer = std::max(w.widest_sharded_layer, (dense_sharded ? routed_dense : 0) + (experts_sharded ? routed_experts : 0));
      }
    }
    first += n;
  }
  return w;
}

int in_flight_passes(const std::string& schedule, int stage, int pp, int m, int chunks) {
  if (schedule == "gpipe") return m * chunks;
  if (schedule == "1f1b") return std::min(pp - stage, m);  // warm-up pp - s - 1, then one more forward
  if (schedule == "interleaved") {
    const int total = m * chunks;
    int warmup = (pp - stage - 1) * 2 + (chunks - 1) * pp;
    if (m == pp) warmup = total;
    warmup = std::min(warmup, total);
    return warmup + (total > warmup ? 1 : 0);
  }
  if (schedule == "zero-bubble-h2") return std::min(2 * pp - 1, m);  // every rank (a test walks the order)
  // Any other schedule: walk its order.
  const ScheduleInfo* s = find_pipeline_schedule(schedule);
  if (!s) return m * chunks;
  return peak_in_flight(*s, stage, pp, m, chunks);
}

int virtual_stage_layers(const Candidate& c, int layers, int v) {
  const int stages = c.pp * c.vpp;
  if (c.first_stage_layers + c.last_stage_layers == 0) return layers / stages;
  if (v == 0) return c.first_stage_layers;
  if (v == stages - 1) return c.last_stage_layers;
  return (layers - c.first_stage_layers - c.last_stage_layers) / (stages - 2);
}

MemoryEstimate estimate_memory(const ModelNumbers& m, const TrainingConfig& base, const Candidate& c, double act_layer,
                               double act_kept) {
  const int micro_batches = base.global_batch / c.dp / c.micro_batch;
  const std::string& schedule = pipeline_schedules()[c.schedule].name;
  const double head_act = double(base.seq_len) / c.cp * c.micro_batch * m.vocab / c.tp * (2 + 4);  // logits + fp32 loss buffers
  MemoryEstimate best;
  best.peak_bytes = -1;
  double host_max = 0;
  // LoRA: one layer's adapters on one GPU (all that trains, and gathered beside the frozen weights).
  const double adapters = base.lora ? lora_layer_parameters(m.model, *base.lora, c.tp) : 0;
  for (int s = 0; s < c.pp; ++s) {
    const StageWeights sw = stage_weights(m, c, s, base.shard_group);
    const int shard = shard_size(c, base.shard_group), expert_shard = expert_shard_size(c, base.shard_group);
    const int widest = sw.widest_chunk;
    double params = sw.dense;
    if (s == 0) params += m.embed_params / c.tp;
    if (s == c.pp - 1) params += m.head_params / c.tp + (c.pp > 1 ? m.tied_copy_params / c.tp : 0);
    const double frozen = base.lora ? params + sw.experts : 0;  // LoRA: all but the adapters
    auto states = models::model_state_bytes(params, c.zero, shard);
    if (m.moe) {
      const auto experts = models::model_state_bytes(sw.experts, c.zero, expert_shard);
      states.weights += experts.weights, states.gradients += experts.gradients, states.optimizer += experts.optimizer;
    }
    if (base.lora) {  // training_memory(): frozen 16-bit weights, and the adapters' full states
      const double adapters_params = sw.layers * adapters;
      const auto adapter_states = models::model_state_bytes(adapters_params, c.zero, shard);
      states.weights += adapter_states.weights;
      states.gradients = adapter_states.gradients;
      states.optimizer = adapter_states.optimizer;
      params = adapters_params;  // what the optimizer owns
    }
    if (c.offload > 0) {  // training_memory(): the states live on the host, one layer's gradients pass through
      const double layer = base.lora ? adapters : sw.widest_layer;  // LoRA: the adapters' gradients
      states.optimizer = 0;
      states.gradients = 2 * layer;
      // ZeRO-Infinity: the layer computed and the one prefetched (with LoRA, the adapters beside the frozen weights)
      if (c.offload >= 2) states.weights = 2 * 2 * (sw.widest_layer + (base.lora ? layer : 0));
    }
    const double owned = c.zero >= 1 ? params / shard + sw.experts / expert_shard : params + sw.experts;
    if (c.offload > 0) host_max = std::max(host_max, offload_host_bytes(offload_modes()[c.offload], owned, frozen / (c.zero >= 1 ? shard : 1)));
    const int recomputed = c.recompute_layers > 0 ? std::min(c.recompute_layers, widest) : widest;
    const double chunk = act_layer * recomputed + act_kept * (widest - recomputed);
    double act = chunk * in_flight_passes(schedule, s, c.pp, micro_batches, c.vpp);
    if (s == c.pp - 1) act += head_act;
    Parallelism par;
    par.tp = c.tp, par.pp = c.pp, par.dp = c.dp, par.cp = c.cp, par.ep = c.ep, par.etp = c.etp;
    const double buffers = communication_buffer_bytes(par, shard_copies(c, base.shard_group), m.moe);
    // With LoRA FSDP gathers the adapters beside the frozen weights; only the adapters have gradients.
    const double widest_sharded = sw.widest_sharded_layer + (sw.widest_sharded_layer > 0 ? adapters : 0);
    const double gathered =
        c.zero >= 3 ? sharded_layer_bytes(widest_sharded, base.lora ? adapters : widest_sharded, c.offload >= 2, c.offload > 0) : 0;
    const double total = states.weights + states.gradients + states.optimizer + act + gathered + buffers +
                         kAllocatorFragmentation * (act + gathered + buffers);
    if (total > best.peak_bytes) {
      best = {total, s, states.weights, states.gradients, states.optimizer, act};
    }
  }
  best.host_bytes = host_max;
  return best;
}

}  // namespace exasim::workloads::planner
