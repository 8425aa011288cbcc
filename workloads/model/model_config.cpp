#include "workloads/model/model_config.hpp"

#include <array>
#include <filesystem>

#include "hw/config/fields.hpp"
#include "models/kernel/expert_routing.hpp"
#include "workloads/model/hf_config.hpp"

namespace exasim::workloads {

namespace {

using config::Node;

int count(const Node& n) { return n.as_positive_count(); }
std::int64_t size(const Node& n) { return n.as_positive_int(); }

MoeSpec moe_from(const Node& n) {
  n.check_keys({"experts", "top_k", "shared_experts", "expert_ffn", "dense_layers"});
  MoeSpec m;
  m.experts = count(n.required("experts"));
  m.top_k = count(n.required("top_k"));
  if (n.has("shared_experts")) m.shared_experts = n["shared_experts"].as_count();
  if (n.has("expert_ffn")) m.expert_ffn = size(n["expert_ffn"]);
  if (n.has("dense_layers")) m.dense_layers = n["dense_layers"].as_count();
  if (m.experts > models::kMaxExperts)
    n["experts"].fail("more than " + std::to_string(models::kMaxExperts) + " experts", "MoE models route over 8-384 experts");
  if (m.top_k > m.experts) n["top_k"].fail("top_k exceeds the number of experts");
  return m;
}

MlaSpec mla_from(const Node& n) {
  n.check_keys({"q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"});
  MlaSpec m;
  m.q_lora_rank = n.has("q_lora_rank") ? n["q_lora_rank"].as_nonnegative_int() : 0;
  m.kv_lora_rank = size(n.required("kv_lora_rank"));
  m.qk_rope_head_dim = size(n.required("qk_rope_head_dim"));
  m.qk_nope_head_dim = size(n.required("qk_nope_head_dim"));
  m.v_head_dim = size(n.required("v_head_dim"));
  return m;
}

const std::array<config::Field<ModelSpec>, 20> kFields = {{
    {"layers", [](ModelSpec& m, const Node& n) { m.layers = count(n); }},
    {"hidden", [](ModelSpec& m, const Node& n) { m.hidden = size(n); }},
    {"heads", [](ModelSpec& m, const Node& n) { m.heads = count(n); }},
    {"kv_heads", [](ModelSpec& m, const Node& n) { m.kv_heads = count(n); }, false},
    {"head_dim", [](ModelSpec& m, const Node& n) { m.head_dim = size(n); }, false},
    {"ffn", [](ModelSpec& m, const Node& n) { m.ffn = size(n); }},
    {"vocab", [](ModelSpec& m, const Node& n) { m.vocab = size(n); }},
    {"gated_mlp", [](ModelSpec& m, const Node& n) { m.gated_mlp = n.as_bool(); }, false},
    {"activation", [](ModelSpec& m, const Node& n) {
       const std::string a = n.as_choice({"gelu", "silu", "relu"});
       m.activation = a == "gelu" ? Activation::kGelu : a == "silu" ? Activation::kSilu : Activation::kRelu;
     }, false},
    {"norm", [](ModelSpec& m, const Node& n) {
       m.norm = n.as_choice({"layernorm", "rmsnorm"}) == "layernorm" ? NormKind::kLayerNorm : NormKind::kRmsNorm;
     }, false},
    {"position", [](ModelSpec& m, const Node& n) {
       const std::string p = n.as_choice({"learned", "rope", "alibi", "none"});
       m.position = p == "learned" ? PositionKind::kLearned
                    : p == "rope"  ? PositionKind::kRope
                    : p == "alibi" ? PositionKind::kAlibi
                                   : PositionKind::kNone;
     }, false},
    {"tied_embeddings", [](ModelSpec& m, const Node& n) { m.tied_embeddings = n.as_bool(); }, false},
    {"qkv_bias", [](ModelSpec& m, const Node& n) { m.qkv_bias = n.as_bool(); }, false},
    {"max_seq_len", [](ModelSpec& m, const Node& n) { m.max_seq_len = size(n); }, false},
    {"moe", [](ModelSpec& m, const Node& n) { m.moe = moe_from(n); }, false},
    {"mla", [](ModelSpec& m, const Node& n) { m.mla = mla_from(n); }, false},
    {"sliding_window", [](ModelSpec& m, const Node& n) { m.sliding_window = size(n); }, false},
    {"sliding_window_pattern", [](ModelSpec& m, const Node& n) { m.sliding_window_pattern = count(n); }, false},
    {"name", [](ModelSpec& m, const Node& n) { m.name = n.as_string(); }, false},
    {"description", [](ModelSpec&, const Node& n) { (void)n.as_string(); }, false},
}};

}  // namespace

ModelSpec model_from_layers(const std::string& name, const std::vector<Node>& layers) {
  ModelSpec m = config::build_from_layers<ModelSpec>(kFields, layers);
  if (m.name.empty()) m.name = name;
  const Node& last = layers.back();
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0) {
    last["kv_heads"].fail("kv_heads (" + std::to_string(m.kv_heads) + ") must divide heads (" + std::to_string(m.heads) + ")");
  }
  if (m.head_dim == 0 && m.hidden % m.heads != 0) {
    last["heads"].fail("heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) + ")",
                       "or give head_dim");
  }
  if (m.position == PositionKind::kLearned && m.max_seq_len == 0) m.max_seq_len = 2048;
  if (m.sliding_window_pattern > 0 && m.sliding_window == 0) {
    last["sliding_window_pattern"].fail("sliding_window_pattern needs sliding_window", "give sliding_window: KEYS (e.g. 128)");
  }
  return m;
}

ModelSpec resolve_model(const Node& ref, const hw::Catalog& catalog, const std::string& base_dir) {
  if (ref.is_map() && ref.has("hf_config")) {
    // `--set model.hf_config=P` on a catalog model wraps it as {base: NAME, hf_config: P}: the
    // config names the whole model, so the name it replaces goes, and a relative P is read from the
    // current folder, where it was typed. Written in a file, base and hf_config contradict.
    const bool typed = ref["hf_config"].overridden();
    if (ref.has("base") && !typed)
      ref["base"].fail("hf_config names the whole model: it takes no base", "remove base, or hf_config");
    ref.check_keys(typed ? std::vector<std::string>{"hf_config", "base"} : std::vector<std::string>{"hf_config"});
    std::filesystem::path p = ref["hf_config"].as_string();
    if (p.is_relative() && !typed) p = std::filesystem::path(base_dir) / p;
    try {
      return model_from_hf_config(p.string());
    } catch (const IoError& e) {
      throw IoError(e.what() + std::string(": ") + p.string(), ref["hf_config"].where(), e.hint());
    }
  }
  return model_from_layers(catalog.reference_name(ref), catalog.layers(hw::CatalogKind::kModel, ref));
}

}  // namespace exasim::workloads
