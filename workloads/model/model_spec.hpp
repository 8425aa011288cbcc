#pragma once
// A transformer language model's architecture: the numbers that decide its FLOPs, bytes and memory.
#include <cstdint>
#include <optional>
#include <string>

namespace exasim::workloads {

enum class Activation : std::uint8_t { kGelu, kSilu, kRelu };
enum class NormKind : std::uint8_t { kLayerNorm, kRmsNorm };
enum class PositionKind : std::uint8_t { kLearned, kRope, kAlibi, kNone };

// Mixture of experts: which layers are MoE, how many experts, how many each token visits.
struct MoeSpec {
  int experts = 0;          // routed experts per MoE layer
  int top_k = 0;            // experts per token
  int shared_experts = 0;   // always-on experts (DeepSeek)
  std::int64_t expert_ffn = 0;  // intermediate size of one expert (0 = the model's ffn)
  int dense_layers = 0;     // leading layers that keep a dense MLP (DeepSeek-V3: 3)
};

// Multi-head latent attention (DeepSeek-V2/V3): low-rank Q and KV projections.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

struct ModelSpec {
  std::string name;
  int layers = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;             // = heads for MHA; fewer for GQA/MQA
  std::int64_t head_dim = 0;    // 0 means hidden / heads
  std::int64_t ffn = 0;         // MLP intermediate size
  std::int64_t vocab = 0;
  bool gated_mlp = false;       // SwiGLU-style gate+up projections
  Activation activation = Activation::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  PositionKind position = PositionKind::kLearned;
  bool tied_embeddings = false;  // LM head shares the input embedding
  bool qkv_bias = false;
  std::int64_t max_seq_len = 0;  // 0 = unknown
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  // Sliding-window attention (Mistral, Gemma 2/3, GPT-OSS): a query sees the `sliding_window`
  // latest keys, itself included (0: full causal attention everywhere). With a pattern p > 0,
  // every p-th layer (layer l with (l + 1) % p == 0) keeps full attention, the others slide
  // (GPT-OSS: window 128, p = 2, alternating from a sliding layer 0); p = 0: every layer slides.
  std::int64_t sliding_window = 0;
  int sliding_window_pattern = 0;

  std::int64_t head_dimension() const { return head_dim > 0 ? head_dim : hidden / heads; }
  // Parameter count (embeddings and LM head included once each unless tied).
  double parameter_count() const;
  // Parameters that one token touches in a forward pass (MoE: only its top_k experts).
  double active_parameter_count() const;
  // One dense transformer layer: attention, MLP, norms (and biases where the family has them).
  double layer_parameter_count() const;
  // Mixture of experts: whether `layer` (0-based) has a routed MLP, the layer without its MLP
  // (attention and norms), one routed expert's MLP, and the router's weights.
  bool is_moe_layer(int layer) const { return moe && layer >= moe->dense_layers; }
  // The keys a query of `layer` sees at most (0: all before it).
  std::int64_t attention_window(int layer) const {
    if (sliding_window <= 0) return 0;
    return sliding_window_pattern > 0 && (layer + 1) % sliding_window_pattern == 0 ? 0 : sliding_window;
  }
  // Layers whose attention slides (attention_window > 0).
  int sliding_layers() const {
    int n = 0;
    for (int l = 0; l < layers; ++l) n += attention_window(l) > 0;
    return n;
  }
  double layer_base_parameter_count() const;
  double expert_parameter_count() const;
  double router_parameter_count() const;
  // Input side: token embedding and learned positions. Output side: final norm and the LM head
  // (zero when tied to the embedding).
  double embedding_parameter_count() const;
  double head_parameter_count() const;
};

}  // namespace exasim::workloads
