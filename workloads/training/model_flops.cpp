#include "workloads/training/model_flops.hpp"

#include <algorithm>

namespace exasim::workloads {

double step_flops_per_forward(const TrainingConfig& cfg) { return cfg.lora ? 2 : 3; }

double model_forward_flops(const ModelSpec& model, const TrainingConfig& cfg) {
  const double s = cfg.seq_len, b = cfg.micro_batch, T = s * b;
  const double h = static_cast<double>(model.hidden), hd = static_cast<double>(model.head_dimension());
  const double a = model.heads, g = model.kv_heads > 0 ? model.kv_heads : model.heads;
  double attn_params = h * (a + 2 * g) * hd + a * hd * h;
  double score_width = hd;  // per head: query-key plus value width over 2
  if (model.mla) {  // the projections' matmul parameters (no norms), and MLA's head widths
    const MlaSpec& m = *model.mla;
    const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double q_lora = static_cast<double>(m.q_lora_rank);
    const double q = m.q_lora_rank > 0 ? h * q_lora + q_lora * a * qk : h * a * qk;
    attn_params = q + h * static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) +
                  static_cast<double>(m.kv_lora_rank) * a * static_cast<double>(m.qk_nope_head_dim + m.v_head_dim) +
                  a * static_cast<double>(m.v_head_dim) * h;
    score_width = (qk + static_cast<double>(m.v_head_dim)) / 2;
  }
  const double mlp_params = (model.gated_mlp ? 3.0 : 2.0) * h * static_cast<double>(model.ffn);
  const double per_layer = 2 * T * (attn_params + mlp_params) + 4 * b * s * s * a * score_width;
  double flops = model.layers * per_layer + 2 * T * h * static_cast<double>(model.vocab);
  if (model.moe) {  // routed layers: each token's top_k and shared experts and the router, not the dense MLP
    const MoeSpec& m = *model.moe;
    const double f = static_cast<double>(m.expert_ffn > 0 ? m.expert_ffn : model.ffn);
    const double routed = (model.gated_mlp ? 3.0 : 2.0) * h * f * (m.top_k + m.shared_experts) + h * m.experts;
    const int moe_layers = model.layers - std::min(m.dense_layers, model.layers);
    flops += moe_layers * 2 * T * (routed - mlp_params);
  }
  return flops;
}

}  // namespace exasim::workloads
