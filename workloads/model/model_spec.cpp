#include "workloads/model/model_spec.hpp"

#include <algorithm>

// Parameter counts follow the HuggingFace modules of each family, so that the totals match the
// checkpoints: Llama/Mistral/Qwen2/Mixtral (no linear biases except Qwen2's QKV), DeepSeek-V3 (MLA),
// GPT-2 and GPT-NeoX (LayerNorm with bias, biases on every linear layer).
namespace exasim::workloads {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// GPT-style (non-gated) models carry a bias on the attention output and both MLP projections;
// the gated families (Llama and its descendants) carry none. ModelSpec has no separate flag, so
// the MLP kind decides, which holds for every family we import.
bool linear_biases(const ModelSpec& m) { return !m.gated_mlp; }

double norm_params(const ModelSpec& m, std::int64_t width) {
  return d(width) * (m.norm == NormKind::kLayerNorm ? 2.0 : 1.0);  // LayerNorm: weight and bias
}

// Multi-head latent attention as in DeepSeek-V3's DeepseekV3Attention.
double mla_params(const ModelSpec& m, const MlaSpec& a) {
  const double h = d(m.hidden);
  const double heads = m.heads;
  const double qk_head = d(a.qk_nope_head_dim + a.qk_rope_head_dim);
  double q = 0;
  if (a.q_lora_rank > 0) {  // q_a_proj, q_a_layernorm (RMS), q_b_proj
    q = h * d(a.q_lora_rank) + d(a.q_lora_rank) + d(a.q_lora_rank) * heads * qk_head;
  } else {  // q_proj (DeepSeek-V2-Lite)
    q = h * heads * qk_head;
  }
  const double kv_a = h * d(a.kv_lora_rank + a.qk_rope_head_dim) + d(a.kv_lora_rank);  // + kv_a_layernorm
  const double kv_b = d(a.kv_lora_rank) * heads * d(a.qk_nope_head_dim + a.v_head_dim);
  const double o = heads * d(a.v_head_dim) * h;
  return q + kv_a + kv_b + o;
}

double attention_params(const ModelSpec& m) {
  if (m.mla) return mla_params(m, *m.mla);
  const double h = d(m.hidden);
  const double q_width = d(m.heads) * d(m.head_dimension());
  const double kv_width = d(m.kv_heads > 0 ? m.kv_heads : m.heads) * d(m.head_dimension());
  double params = h * q_width + 2 * h * kv_width + q_width * h;  // Q, K, V, O
  if (m.qkv_bias) params += q_width + 2 * kv_width;
  if (linear_biases(m)) params += h;  // output projection bias
  return params;
}

double mlp_params(const ModelSpec& m, std::int64_t ffn) {
  const double h = d(m.hidden);
  const double f = d(ffn);
  if (m.gated_mlp) return 3 * h * f;  // gate, up, down
  return 2 * h * f + (linear_biases(m) ? f + h : 0.0);
}

// Everything in one layer except its MLP: attention and the two norms.
double layer_base_params(const ModelSpec& m) { return attention_params(m) + 2 * norm_params(m, m.hidden); }

// MLP of a MoE layer; `experts_used` is all routed experts or only the top_k a token visits.
double moe_mlp_params(const ModelSpec& m, const MoeSpec& moe, int experts_used) {
  const std::int64_t expert_ffn = moe.expert_ffn > 0 ? moe.expert_ffn : m.ffn;
  const double expert = mlp_params(m, expert_ffn);
  const double router = d(m.hidden) * moe.experts;
  return (experts_used + moe.shared_experts) * expert + router;
}

// Embedding, learned positions, LM head, final norm.
double outer_params(const ModelSpec& m) {
  double params = d(m.vocab) * d(m.hidden) * (m.tied_embeddings ? 1.0 : 2.0);
  if (m.position == PositionKind::kLearned) params += d(m.max_seq_len) * d(m.hidden);
  return params + norm_params(m, m.hidden);
}

double count(const ModelSpec& m, bool active_only) {
  double params = outer_params(m) + m.layers * layer_base_params(m);
  if (!m.moe) return params + m.layers * mlp_params(m, m.ffn);
  const MoeSpec& moe = *m.moe;
  const int dense = std::min(moe.dense_layers, m.layers);
  const int experts_used = active_only ? moe.top_k : moe.experts;
  params += dense * mlp_params(m, m.ffn);
  params += (m.layers - dense) * moe_mlp_params(m, moe, experts_used);
  return params;
}

}  // namespace

double ModelSpec::parameter_count() const { return count(*this, false); }

double ModelSpec::active_parameter_count() const { return count(*this, true); }

double ModelSpec::layer_parameter_count() const { return layer_base_params(*this) + mlp_params(*this, ffn); }

double ModelSpec::layer_base_parameter_count() const { return layer_base_params(*this); }

double ModelSpec::expert_parameter_count() const {
  if (!moe) return 0;
  return mlp_params(*this, moe->expert_ffn > 0 ? moe->expert_ffn : ffn);
}

double ModelSpec::router_parameter_count() const { return moe ? d(hidden) * moe->experts : 0; }

double ModelSpec::embedding_parameter_count() const {
  double params = d(vocab) * d(hidden);
  if (position == PositionKind::kLearned) params += d(max_seq_len) * d(hidden);
  return params;
}

double ModelSpec::head_parameter_count() const {
  return (tied_embeddings ? 0.0 : d(vocab) * d(hidden)) + norm_params(*this, hidden);
}

}  // namespace exasim::workloads
