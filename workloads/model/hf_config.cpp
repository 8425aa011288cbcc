#include "workloads/model/hf_config.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hw/config/json_text.hpp"
#include "hw/error.hpp"
#include "models/kernel/expert_routing.hpp"

namespace exasim::workloads {
namespace {

using nlohmann::json;
using Keys = std::initializer_list<std::string_view>;

// What config.json leaves implicit because each family's modeling code hard-wires it.
struct Family {
  std::string_view model_type;
  std::string_view architecture;  // class-name prefix in `architectures`, for files without model_type
  bool gated_mlp;
  Activation activation;
  NormKind norm;
  PositionKind position;
  bool tied_embeddings;  // the config class's default for tie_word_embeddings
  bool qkv_bias;
  int default_ffn_ratio;  // ffn = ratio * hidden when the file has no ffn field (GPT-2 n_inner: null)
};

constexpr auto kSilu = Activation::kSilu;
constexpr auto kGelu = Activation::kGelu;
constexpr auto kRms = NormKind::kRmsNorm;
constexpr auto kLn = NormKind::kLayerNorm;
constexpr auto kRope = PositionKind::kRope;

constexpr std::array kFamilies = {
    Family{"llama", "Llama", true, kSilu, kRms, kRope, false, false, 0},
    Family{"mistral", "Mistral", true, kSilu, kRms, kRope, false, false, 0},
    Family{"mixtral", "Mixtral", true, kSilu, kRms, kRope, false, false, 0},
    Family{"qwen2", "Qwen2", true, kSilu, kRms, kRope, false, true, 0},  // Qwen2 has biases on Q, K, V
    Family{"deepseek_v2", "DeepseekV2", true, kSilu, kRms, kRope, false, false, 0},
    Family{"deepseek_v3", "DeepseekV3", true, kSilu, kRms, kRope, false, false, 0},
    Family{"gpt_neox", "GPTNeoX", false, kGelu, kLn, kRope, false, true, 0},
    Family{"gpt2", "GPT2", false, kGelu, kLn, PositionKind::kLearned, true, true, 4},
};
// Unknown model types: the Llama layout most recent models share; fields in the file still win.
constexpr Family kFallbackFamily{"", "", true, kSilu, kRms, kRope, false, false, 0};

struct NamedActivation {
  std::string_view name;  // matched as a substring of hidden_act ("gelu_new", "gelu_pytorch_tanh")
  Activation activation;
};
// The largest model dimension read (2^24): today's largest are FFN widths of 53248 (Llama 3.1
// 405B), vocabularies of 256k and contexts of 10M tokens; an n_embd of 2^62 overflowed the
// parameter count.
constexpr std::int64_t kMaxDimension = std::int64_t{1} << 24;

constexpr std::array kActivations = {NamedActivation{"silu", kSilu}, NamedActivation{"swish", kSilu},
                                     NamedActivation{"gelu", kGelu}, NamedActivation{"relu", Activation::kRelu}};

std::string joined(Keys keys) {
  std::string out;
  for (std::string_view k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

// Field access with errors that name the file, the line of the key and the names tried.
class Reader {
 public:
  Reader(const json& root, std::string file, const std::string& text)
      : root_(root), file_(std::move(file)), text_(text) {}

  // The first of `keys` present with a non-null value, and its name.
  std::optional<std::pair<std::string_view, const json*>> find(Keys keys) const {
    for (std::string_view k : keys) {
      const auto it = root_.find(k);
      if (it != root_.end() && !it->is_null()) return std::pair{k, &*it};
    }
    return std::nullopt;
  }

  bool has(Keys keys) const { return find(keys).has_value(); }

  std::optional<std::int64_t> optional_integer(Keys keys) const {
    const auto found = find(keys);
    if (!found) return std::nullopt;
    const json& v = *found->second;
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(found->first, "value " + v.dump() + " is out of range", "a model dimension: at most " + std::to_string(kMaxDimension));
    if (v.is_number_integer()) return v.get<std::int64_t>();
    // Some exporters write integers as floats ("4096.0").
    if (v.is_number_float() && std::trunc(v.get<double>()) == v.get<double>() &&
        std::fabs(v.get<double>()) < 9e15)
      return static_cast<std::int64_t>(v.get<double>());
    fail(found->first, "expected an integer, got " + v.dump());
  }

  std::int64_t integer(Keys keys) const {
    if (auto v = optional_integer(keys)) return *v;
    missing(keys);
  }

  // A required count: positive and small enough for an int.
  int count(Keys keys) const {
    const std::int64_t v = integer(keys);
    check_range(keys, v, 1, std::numeric_limits<int>::max());
    return static_cast<int>(v);
  }

  // A dimension (hidden, vocabulary, FFN, head and MLA widths, context): positive and at most
  // kMaxDimension, so the products the model forms (hidden^2 x layers, vocab x hidden) stay exact.
  std::int64_t size(Keys keys) const {
    const std::int64_t v = integer(keys);
    check_range(keys, v, 1, kMaxDimension);
    return v;
  }

  std::optional<bool> optional_bool(std::string_view key) const {
    const auto found = find({key});
    if (!found) return std::nullopt;
    if (!found->second->is_boolean()) fail(key, "expected true or false, got " + found->second->dump());
    return found->second->get<bool>();
  }

  std::optional<std::string> optional_string(Keys keys) const {
    const auto found = find(keys);
    if (!found) return std::nullopt;
    if (!found->second->is_string()) fail(found->first, "expected a string, got " + found->second->dump());
    return found->second->get<std::string>();
  }

  void check_range(Keys keys, std::int64_t v, std::int64_t lo, std::int64_t hi) const {
    if (v >= lo && v <= hi) return;
    const auto found = find(keys);
    fail(found ? found->first : *keys.begin(), "value " + std::to_string(v) + " is out of range",
         "expected " + std::to_string(lo) + " to " + std::to_string(hi));
  }

  [[noreturn]] void missing(Keys keys) const {
    const std::string key(*keys.begin());
    throw ConfigError("missing required field \"" + key + "\"", SourceLocation{file_, 0, key},
                      "tried " + joined(keys));
  }

  [[noreturn]] void fail(std::string_view key, const std::string& what, std::string hint = {}) const {
    const std::size_t at = text_.find("\"" + std::string(key) + "\"");
    const int line = at == std::string::npos ? 0 : config::line_of(text_, at);
    throw ConfigError(what, SourceLocation{file_, line, std::string(key)}, std::move(hint));
  }

 private:
  const json& root_;
  std::string file_;
  const std::string& text_;
};

std::filesystem::path config_path(const std::string& path) {
  std::filesystem::path p(path);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) p /= "config.json";
  if (!std::filesystem::is_regular_file(p, ec))
    throw IoError("cannot read HuggingFace config: no such file", SourceLocation{p.string(), 0, {}},
                  "give the path of a config.json or of a model directory that holds one");
  return p;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw IoError("cannot read HuggingFace config", SourceLocation{p.string(), 0, {}}, "check its permissions");
  return text.str();
}

json parse_json(const std::string& text, const std::string& file) {
  json root = config::parse_json_text(text, file);
  if (!root.is_object()) throw ConfigError("a HuggingFace config must be a JSON object", SourceLocation{file, 1, {}});
  return root;
}

const Family& find_family(const Reader& r) {
  const auto type = r.optional_string({"model_type"});
  std::string arch;
  if (const auto archs = r.find({"architectures"}); archs && archs->second->is_array() &&
                                                   !archs->second->empty() && (*archs->second)[0].is_string())
    arch = (*archs->second)[0].get<std::string>();
  for (const Family& f : kFamilies) {
    if (type ? *type == f.model_type : arch.starts_with(f.architecture) && !arch.empty()) return f;
  }
  return kFallbackFamily;
}

Activation read_activation(const Reader& r, const Family& family) {
  const Keys keys = {"hidden_act", "activation_function"};
  const auto name = r.optional_string(keys);
  if (!name) return family.activation;
  for (const NamedActivation& a : kActivations)
    if (name->find(a.name) != std::string::npos) return a.activation;
  r.fail(r.find(keys)->first, "unknown activation \"" + *name + "\"", "expected silu, gelu or relu");
}

// Norm, positions, biases, tying: the family's defaults unless the file says otherwise.
void read_style(const Reader& r, const Family& family, bool known_family, ModelSpec& m) {
  m.gated_mlp = family.gated_mlp;
  m.activation = read_activation(r, family);
  if (!known_family) m.gated_mlp = m.activation == Activation::kSilu;  // SwiGLU is the silu variant
  m.norm = family.norm;
  if (!known_family && r.has({"layer_norm_eps", "layer_norm_epsilon", "layernorm_epsilon"})) m.norm = kLn;
  m.position = family.position;
  if (r.optional_bool("alibi").value_or(false)) m.position = PositionKind::kAlibi;
  m.tied_embeddings = r.optional_bool("tie_word_embeddings").value_or(family.tied_embeddings);
  m.qkv_bias = r.optional_bool("attention_bias").value_or(family.qkv_bias);
}

void read_attention(const Reader& r, ModelSpec& m) {
  const Keys heads = {"num_attention_heads", "n_head", "num_heads"};
  m.heads = r.count(heads);
  const Keys kv = {"num_key_value_heads", "num_kv_heads", "n_head_kv"};
  if (r.has(kv)) {
    m.kv_heads = r.count(kv);
  } else {
    m.kv_heads = r.optional_bool("multi_query").value_or(false) ? 1 : m.heads;
  }
  if (m.heads % m.kv_heads != 0)
    r.fail(r.find(kv) ? r.find(kv)->first : "num_key_value_heads",
           std::to_string(m.kv_heads) + " key/value heads do not divide " + std::to_string(m.heads) + " heads");
  if (r.has({"head_dim"})) {
    m.head_dim = r.size({"head_dim"});
  } else if (!r.has({"kv_lora_rank"}) && m.hidden % m.heads != 0) {
    r.fail(r.find(heads)->first, std::to_string(m.heads) + " heads do not divide hidden size " +
                                     std::to_string(m.hidden), "give head_dim");
  }
}

void read_moe(const Reader& r, ModelSpec& m) {
  const Keys experts = {"num_local_experts", "n_routed_experts", "num_experts"};
  if (r.optional_integer(experts).value_or(0) == 0) return;
  MoeSpec moe;
  moe.experts = r.count(experts);
  r.check_range(experts, moe.experts, 1, models::kMaxExperts);
  const Keys top_k = {"num_experts_per_tok", "moe_top_k"};
  moe.top_k = r.count(top_k);
  r.check_range(top_k, moe.top_k, 1, moe.experts);
  moe.shared_experts = static_cast<int>(r.optional_integer({"n_shared_experts"}).value_or(0));
  moe.expert_ffn = r.optional_integer({"moe_intermediate_size"}).value_or(0);
  moe.dense_layers = static_cast<int>(r.optional_integer({"first_k_dense_replace"}).value_or(0));
  r.check_range({"n_shared_experts"}, moe.shared_experts, 0, moe.experts);
  r.check_range({"first_k_dense_replace"}, moe.dense_layers, 0, m.layers);
  const Keys freq = {"moe_layer_freq"};
  if (r.optional_integer(freq).value_or(1) != 1)
    r.fail("moe_layer_freq", "MoE on every n-th layer is not modelled", "only moe_layer_freq: 1 is supported");
  m.moe = moe;
}

void read_mla(const Reader& r, ModelSpec& m) {
  if (!r.has({"kv_lora_rank"})) return;
  MlaSpec mla;
  mla.q_lora_rank = r.optional_integer({"q_lora_rank"}).value_or(0);  // null in DeepSeek-V2-Lite
  mla.kv_lora_rank = r.size({"kv_lora_rank"});
  mla.qk_rope_head_dim = r.size({"qk_rope_head_dim"});
  mla.qk_nope_head_dim = r.size({"qk_nope_head_dim"});
  mla.v_head_dim = r.size({"v_head_dim"});
  // Attention scores run over the full query/key head; hidden / heads would be meaningless here.
  if (m.head_dim == 0) m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  m.mla = mla;
}

// Sliding-window attention. GPT-OSS lists each layer's kind ("layer_types": "sliding_attention" /
// "full_attention"); Mistral v0.1 slides on every layer ("sliding_window"); Gemma 3 keeps every
// p-th layer full ("sliding_window_pattern"); Qwen2 writes a window it does not use unless
// "use_sliding_window" is true (and then only above "max_window_layers", which is not modelled).
void read_sliding_window(const Reader& r, const json& root, ModelSpec& m) {
  const auto window = r.optional_integer({"sliding_window"});
  if (!window || *window <= 0 || !r.optional_bool("use_sliding_window").value_or(true)) return;
  if (r.has({"max_window_layers"}) && r.optional_integer({"max_window_layers"}).value_or(0) < m.layers)
    r.fail("max_window_layers", "sliding windows on the layers above max_window_layers are not modelled",
           "set use_sliding_window: false, or give the model in exasim's YAML");
  r.check_range({"sliding_window"}, *window, 1, std::numeric_limits<std::int64_t>::max());
  m.sliding_window = *window;
  // Gemma 2's modeling code alternates sliding (even) and full (odd) layers without saying so in
  // config.json (older files have no layer_types): every 2nd layer full.
  const int hard_wired = r.optional_string({"model_type"}).value_or("") == "gemma2" ? 2 : 0;
  m.sliding_window_pattern = static_cast<int>(r.optional_integer({"sliding_window_pattern"}).value_or(hard_wired));
  r.check_range({"sliding_window_pattern"}, m.sliding_window_pattern, 0, m.layers);
  const auto types = root.find("layer_types");
  if (types == root.end() || types->is_null()) return;
  if (!types->is_array() || types->size() != static_cast<std::size_t>(m.layers))
    r.fail("layer_types", "expected one entry per layer (" + std::to_string(m.layers) + ")");
  std::vector<bool> full;
  for (const json& t : *types) {
    if (!t.is_string() || (t != "sliding_attention" && t != "full_attention"))
      r.fail("layer_types", "expected \"sliding_attention\" or \"full_attention\", got " + t.dump());
    full.push_back(t == "full_attention");
  }
  // The pattern p whose full layers are exactly l with (l + 1) % p == 0 (p = 0: none full).
  for (int p = 0; p <= m.layers; ++p) {
    if (p == 1) continue;  // every layer full: no window at all
    bool match = true;
    for (int l = 0; l < m.layers && match; ++l) match = full[l] == (p > 0 && (l + 1) % p == 0);
    if (match) {
      m.sliding_window_pattern = p;
      return;
    }
  }
  if (std::all_of(full.begin(), full.end(), [](bool f) { return f; })) {
    m.sliding_window = 0, m.sliding_window_pattern = 0;
    return;
  }
  r.fail("layer_types", "a mix of sliding and full layers other than every p-th layer full is not modelled",
         "give the model in exasim's YAML with sliding_window and sliding_window_pattern");
}

std::string model_name(const Reader& r, const std::filesystem::path& file) {
  if (auto name = r.optional_string({"_name_or_path"}); name && !name->empty()) return *name;
  return std::filesystem::absolute(file).parent_path().filename().string();
}

}  // namespace

ModelSpec model_from_hf_config(const std::string& path) {
  const std::filesystem::path file = config_path(path);
  const std::string text = read_text(file);
  const json root = parse_json(text, file.string());
  const Reader r(root, file.string(), text);
  const Family& family = find_family(r);

  ModelSpec m;
  m.name = model_name(r, file);
  m.layers = r.count({"num_hidden_layers", "n_layer", "num_layers"});
  m.hidden = r.size({"hidden_size", "n_embd", "d_model"});
  m.vocab = r.size({"vocab_size"});
  const Keys ffn = {"intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"};
  m.ffn = family.default_ffn_ratio > 0 && !r.has(ffn) ? family.default_ffn_ratio * m.hidden : r.size(ffn);
  const Keys positions = {"max_position_embeddings", "n_positions", "seq_length", "max_sequence_length"};
  read_style(r, family, &family != &kFallbackFamily, m);
  // Learned position tables are parameters, so their length is required then.
  m.max_seq_len = m.position == PositionKind::kLearned ? r.size(positions)
                                                      : r.optional_integer(positions).value_or(0);
  read_attention(r, m);
  read_moe(r, m);
  read_mla(r, m);
  read_sliding_window(r, root, m);
  return m;
}

}  // namespace exasim::workloads
