#include "workloads/training/training_memory.hpp"

#include <algorithm>

#include "models/memory/model_state_memory.hpp"
#include "workloads/training/pipeline_schedule.hpp"

namespace exasim::workloads {

int in_flight_chunks(const TrainingPlan& plan, int stage) {
  // Read off the schedule itself: the most forwards whose backward has not run yet. GPipe gives
  // m, 1F1B pp - stage (Narayanan et al., SC'21, Section 2.2.1), interleaving its warm-up + 1.
  const ScheduleInfo* s = find_pipeline_schedule(plan.config().pipeline_schedule);
  if (!s) return plan.micro_batches() * plan.chunks();
  // ZB-H1 holds a micro-batch until its weight-gradient pass (Qi et al.: p on every rank).
  return peak_in_flight(*s, stage, plan.par().pp, plan.micro_batches(), plan.chunks());
}

int in_flight_micro_batches(const TrainingPlan& plan, int stage) {
  return (in_flight_chunks(plan, stage) + plan.chunks() - 1) / plan.chunks();
}

double layer_activation_bytes(const TrainingPlan& plan) { return layer_activation_bytes(plan.model(), plan.config()); }

double layer_activation_bytes(const ModelSpec& m, const TrainingConfig& c) {
  models::LayerShape shape;
  shape.seq = double(c.seq_len) / c.parallelism.cp;  // context parallelism keeps s/cp tokens per GPU
  shape.micro_batch = c.micro_batch;
  shape.hidden = static_cast<double>(m.hidden);
  shape.heads = m.heads;
  shape.kv_heads = m.kv_heads;
  shape.ffn = static_cast<double>(m.ffn);
  if (m.moe) {
    // A routed layer keeps, per token, top_k + shared copies of an expert's intermediate
    // activations, whole (expert TP 1): as a dense MLP of that width per GPU. Layers are costed
    // at the wider of the two kinds.
    const double f = static_cast<double>(m.moe->expert_ffn > 0 ? m.moe->expert_ffn : m.ffn);
    const double routed = (m.moe->top_k + m.moe->shared_experts) * f * c.parallelism.tp;
    shape.ffn = std::max(shape.ffn, routed);
  }
  shape.gated_mlp = m.gated_mlp;
  models::ActivationOptions opt;
  opt.tp = c.parallelism.tp;
  opt.sequence_parallel = c.parallelism.sequence_parallel && c.parallelism.tp > 1;
  opt.recompute = c.recompute;
  opt.flash_attention = c.attention == AttentionKernel::kFlash;
  opt.fp8_gemm_inputs = c.precision == DType::kFp8;
  return models::layer_activation_bytes(shape, opt);
}

// A routed layer: attention and norms split by TP, the router and shared experts whole on every
// GPU, experts / ep routed experts, each split over etp GPUs.
SharedParameters layer_parameters(const TrainingPlan& plan, int layer) {
  const ModelSpec& m = plan.model();
  const int tp = plan.par().tp;
  if (!m.is_moe_layer(layer)) return {m.layer_parameter_count() / tp, 0};
  const double dense = m.layer_base_parameter_count() / tp + m.router_parameter_count() +
                       m.moe->shared_experts * m.expert_parameter_count();
  return {dense, double(m.moe->experts) / plan.par().ep * m.expert_parameter_count() / plan.par().etp};
}

SharedParameters sharded_layer_parameters(const TrainingPlan& plan, int layer) {
  if (plan.config().zero < 3) return {};
  SharedParameters p = layer_parameters(plan, layer);
  if (plan.config().lora) p.dense += layer_trainable_parameters(plan, layer).dense;  // the adapters beside the frozen weights
  if (plan.shard_size() <= 1) p.dense = 0;
  if (plan.expert_shard_size() <= 1) p.expert = 0;
  return p;
}

SharedParameters sharded_layer_gradients(const TrainingPlan& plan, int layer) {
  if (plan.config().zero < 3) return {};
  SharedParameters p = layer_trainable_parameters(plan, layer);
  if (plan.weight_replicas() <= 1) p.dense = 0;
  if (plan.expert_replicas() <= 1) p.expert = 0;
  return p;
}

// Megatron keeps a copy of a tied embedding on the last stage when pp > 1.
SharedParameters stage_outer_parameters(const TrainingPlan& plan, int stage) {
  const ModelSpec& m = plan.model();
  const int tp = plan.par().tp, pp = plan.par().pp;
  SharedParameters p;
  if (stage == 0) p.dense += m.embedding_parameter_count() / tp;
  if (stage == pp - 1) {
    p.dense += m.head_parameter_count() / tp;
    if (m.tied_embeddings && pp > 1) p.dense += static_cast<double>(m.vocab * m.hidden) / tp;
  }
  return p;
}

SharedParameters stage_parameters(const TrainingPlan& plan, int stage) {
  SharedParameters p = stage_outer_parameters(plan, stage);
  for (int c = 0; c < plan.chunks(); ++c)
    for (int l = 0; l < plan.layers_in(stage, c); ++l) {
      const SharedParameters layer = layer_parameters(plan, plan.first_layer(stage, c) + l);
      p.dense += layer.dense, p.expert += layer.expert;
    }
  return p;
}

double stage_parameter_count(const TrainingPlan& plan, int stage) { return stage_parameters(plan, stage).total(); }

double lora_layer_parameters(const ModelSpec& m, const LoraConfig& lora, int tp) {
  const double t = tp, r = lora.rank, h = static_cast<double>(m.hidden);
  const double kv = m.kv_heads > 0 ? m.kv_heads : m.heads, head = static_cast<double>(m.head_dimension());
  const double qkv = (m.heads + 2 * kv) * head, ctx = m.heads * head;
  const double up = static_cast<double>(m.ffn) * (m.gated_mlp ? 2 : 1);
  double p = 0;
  if (lora.qkv) p += r * h + r * qkv / t;  // column-parallel: A whole, B split with the outputs
  if (lora.mlp_up) p += r * h + r * up / t;
  if (lora.attn_out) p += r * ctx / t + r * h;  // row-parallel: A split with the inputs, B whole
  if (lora.mlp_down) p += r * static_cast<double>(m.ffn) / t + r * h;
  return p;
}

SharedParameters layer_trainable_parameters(const TrainingPlan& plan, int layer) {
  const std::optional<LoraConfig>& lora = plan.config().lora;
  if (!lora) return layer_parameters(plan, layer);
  return {lora_layer_parameters(plan.model(), *lora, plan.par().tp), 0};
}

SharedParameters stage_trainable_parameters(const TrainingPlan& plan, int stage) {
  const std::optional<LoraConfig>& lora = plan.config().lora;
  if (!lora) return stage_parameters(plan, stage);
  // Every layer's adapters alike; the embedding and the head are frozen.
  return {plan.layers_on_stage(stage) * lora_layer_parameters(plan.model(), *lora, plan.par().tp), 0};
}

namespace {

// Extra activations outside the transformer layers: the logits and their fp32 loss buffers on
// the last stage, for the one micro-batch being finished.
double head_activation_bytes(const TrainingPlan& plan) {
  const TrainingConfig& c = plan.config();
  const double tokens = double(c.seq_len) * c.micro_batch / c.parallelism.cp;
  return tokens * double(plan.model().vocab) / plan.par().tp * (2 + 4);
}

}  // namespace

double communication_buffer_bytes(const Parallelism& p, int weight_shard_groups, bool moe) {
  int communicators = (p.tp > 1) + (p.pp > 1) + (p.cp > 1);
  if (p.dp * p.cp > 1) communicators += weight_shard_groups > 1 ? 2 : 1;
  if (moe) {
    const int expert_dp = p.tp * p.cp * p.dp / (p.ep * p.etp);
    communicators += (p.ep > 1) + (p.etp > 1) + (expert_dp > 1) + (expert_dp > 1 && weight_shard_groups > 1);  // + copies
  }
  return communicators * kNcclBytesPerCommunicator;
}

double sharded_layer_bytes(double layer_params, double gradient_params, bool weights_offloaded, bool gradients_offloaded) {
  return (weights_offloaded ? 0 : 2 * 2 * layer_params) + (gradients_offloaded ? 0 : 2 * gradient_params);
}

MemoryReport training_memory(const TrainingPlan& plan) {
  const TrainingConfig& c = plan.config();
  const double act_layer = layer_activation_bytes(plan);
  // Block recompute: the first recompute_layers layers of a chunk keep only their inputs, the
  // others all their activations.
  TrainingConfig kept = c;
  kept.recompute = c.recompute_layers > 0 ? models::Recompute::kNone : c.recompute;
  const double act_kept = c.recompute_layers > 0 ? layer_activation_bytes(plan.model(), kept) : act_layer;
  auto chunk_activation_bytes = [&](int layers) {
    const int recomputed = c.recompute_layers > 0 ? std::min(layers, c.recompute_layers) : layers;
    return recomputed * act_layer + (layers - recomputed) * act_kept;
  };
  MemoryReport r;
  for (int s = 0; s < plan.par().pp; ++s) {
    StageMemory mem;
    const SharedParameters params = stage_parameters(plan, s);
    mem.parameters = params.total();
    const auto states = models::model_state_bytes(params.dense, c.zero, plan.shard_size());
    const auto experts = models::model_state_bytes(params.expert, c.zero, plan.expert_shard_size());
    mem.weights = states.weights + experts.weights;
    mem.gradients = states.gradients + experts.gradients;
    mem.optimizer = states.optimizer + experts.optimizer;
    if (c.lora) {  // frozen 16-bit weights, and the adapters' full states (LoRA has no MoE here)
      const auto adapters = models::model_state_bytes(stage_trainable_parameters(plan, s).dense, c.zero, plan.shard_size());
      mem.weights = states.weights + adapters.weights;
      mem.gradients = adapters.gradients;
      mem.optimizer = adapters.optimizer;
    }
    if (c.offload != "none") {
      // ZeRO-Offload (Ren et al., ATC'21): fp32 master weights, Adam moments and fp32 gradients
      // live in host memory; the GPU keeps its 16-bit weights and one layer's gradient bucket on
      // its way to the host (the widest of the stage's layers, this GPU's part of it).
      double layer = 0, weights = 0;  // the widest layer's trainable parameters, and all it computes with
      for (int k = 0; k < plan.chunks(); ++k)
        for (int l = 0; l < plan.layers_in(s, k); ++l) {
          const double trains = layer_trainable_parameters(plan, plan.first_layer(s, k) + l).total();
          layer = std::max(layer, trains);
          weights = std::max(weights, layer_parameters(plan, plan.first_layer(s, k) + l).total() + (c.lora ? trains : 0));
        }
      mem.optimizer = 0;
      mem.gradients = 2 * layer;
      // ZeRO-Infinity (Rajbhandari et al., SC'21): the 16-bit weights live there too (with LoRA the
      // frozen ones and the adapters); the GPU holds the layer being computed and the one being
      // prefetched, gathered.
      if (c.offload == "params-cpu" || c.offload == "nvme") mem.weights = 2 * 2 * weights;
    }
    if (c.zero >= 3) {
      double widest = 0, widest_grads = 0;  // the widest sharded layer of the stage, per GPU
      for (int k = 0; k < plan.chunks(); ++k)
        for (int l = 0; l < plan.layers_in(s, k); ++l) {
          widest = std::max(widest, sharded_layer_parameters(plan, plan.first_layer(s, k) + l).total());
          // Gradients held whole until reduce-scattered: the sharded parts (others count as states).
          SharedParameters g = sharded_layer_gradients(plan, plan.first_layer(s, k) + l);
          if (plan.shard_size() <= 1) g.dense = 0;
          if (plan.expert_shard_size() <= 1) g.expert = 0;
          widest_grads = std::max(widest_grads, g.total());
        }
      mem.gathered = sharded_layer_bytes(widest, widest_grads, c.offload == "params-cpu" || c.offload == "nvme", c.offload != "none");
    }
    mem.in_flight = in_flight_micro_batches(plan, s);
    double widest_chunk = 0;  // chunks may differ under an uneven split: bound by the widest
    for (int k = 0; k < plan.chunks(); ++k) widest_chunk = std::max(widest_chunk, chunk_activation_bytes(plan.layers_in(s, k)));
    mem.activations = widest_chunk * in_flight_chunks(plan, s);
    if (s == plan.par().pp - 1) mem.activations += head_activation_bytes(plan);
    mem.buffers = communication_buffer_bytes(plan.par(), plan.shard_replicas(), plan.model().moe.has_value());
    mem.fragmentation = kAllocatorFragmentation * (mem.activations + mem.gathered + mem.buffers);
    r.stages.push_back(mem);
    if (mem.total() > r.stages[r.peak_stage].total()) r.peak_stage = s;
  }
  return r;
}

}  // namespace exasim::workloads
