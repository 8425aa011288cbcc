#include "workloads/model/hf_config.hpp"

#include <doctest/doctest.h>

#include "approx.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include "hw/error.hpp"

using exasim::ConfigError;
using exasim::IoError;
using exasim::workloads::Activation;
using exasim::workloads::model_from_hf_config;
using exasim::workloads::ModelSpec;
using exasim::workloads::NormKind;
using exasim::workloads::PositionKind;

namespace {

std::string sample(const std::string& name) { return std::string(EXASIM_TEST_DATA) + "/hf/" + name + "/config.json"; }

// A config.json written into a fresh temporary directory named `dir`.
std::string write_temp(const std::string& dir, const std::string& text) {
  const auto folder = std::filesystem::temp_directory_path() / ("exasim_hf_test_" + dir);
  std::filesystem::create_directories(folder);
  const auto file = folder / "config.json";
  std::ofstream(file) << text;
  return file.string();
}

// The error thrown by importing `path`, as ConfigError; fails the test if none is thrown.
template <typename E>
E error_of(const std::string& path) {
  try {
    model_from_hf_config(path);
  } catch (const E& e) {
    return e;
  }
  FAIL("no error thrown for ", path);
  return E("unreachable");
}

constexpr const char* kTinyLlama = R"({
  "model_type": "llama",
  "num_hidden_layers": 2,
  "hidden_size": 64,
  "num_attention_heads": 4,
  "intermediate_size": 128,
  "vocab_size": 100
})";

}  // namespace

// Published totals are rounded to 3 significant digits; the structural counts below are exact and
// match the sizes of the checkpoints' tensors.
TEST_CASE("hf_config: Llama-3.1-8B") {
  const ModelSpec m = model_from_hf_config(sample("Llama-3.1-8B"));
  CHECK(m.name == "Llama-3.1-8B");
  CHECK(m.layers == 32);
  CHECK(m.hidden == 4096);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dimension() == 128);
  CHECK(m.ffn == 14336);
  CHECK(m.vocab == 128256);
  CHECK(m.gated_mlp);
  CHECK(m.activation == Activation::kSilu);
  CHECK(m.norm == NormKind::kRmsNorm);
  CHECK(m.position == PositionKind::kRope);
  CHECK_FALSE(m.tied_embeddings);
  CHECK_FALSE(m.qkv_bias);
  CHECK(m.max_seq_len == 131072);
  CHECK_FALSE(m.moe);
  CHECK_FALSE(m.mla);
  CHECK(m.parameter_count() == 8'030'261'248.0);
  CHECK(m.parameter_count() == exasim::testing::approx(8.03e9).epsilon(0.01));
  CHECK(m.active_parameter_count() == m.parameter_count());
}

TEST_CASE("hf_config: Mixtral-8x7B") {
  const ModelSpec m = model_from_hf_config(sample("Mixtral-8x7B"));
  REQUIRE(m.moe);
  CHECK(m.moe->experts == 8);
  CHECK(m.moe->top_k == 2);
  CHECK(m.moe->shared_experts == 0);
  CHECK(m.moe->dense_layers == 0);
  CHECK(m.kv_heads == 8);
  CHECK(m.max_seq_len == 32768);
  CHECK(m.parameter_count() == 46'702'792'704.0);
  CHECK(m.parameter_count() == exasim::testing::approx(46.7e9).epsilon(0.01));
  CHECK(m.active_parameter_count() == exasim::testing::approx(12.9e9).epsilon(0.01));
}

TEST_CASE("hf_config: Qwen2-7B has QKV biases") {
  const ModelSpec m = model_from_hf_config(sample("Qwen2-7B"));
  CHECK(m.qkv_bias);
  CHECK(m.kv_heads == 4);
  CHECK(m.head_dimension() == 128);
  CHECK(m.ffn == 18944);
  CHECK(m.parameter_count() == 7'615'616'512.0);
  CHECK(m.parameter_count() == exasim::testing::approx(7.6e9).epsilon(0.01));
}

TEST_CASE("hf_config: GPT-NeoX-20B") {
  const ModelSpec m = model_from_hf_config(sample("GPT-NeoX-20B"));
  CHECK(m.layers == 44);
  CHECK(m.kv_heads == 64);
  CHECK_FALSE(m.gated_mlp);
  CHECK(m.activation == Activation::kGelu);
  CHECK(m.norm == NormKind::kLayerNorm);
  CHECK(m.position == PositionKind::kRope);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(m.qkv_bias);
  // 20,554,567,680 is the count in the GPT-NeoX-20B paper (Black et al. 2022).
  CHECK(m.parameter_count() == 20'554'567'680.0);
  CHECK(m.parameter_count() == exasim::testing::approx(20.6e9).epsilon(0.01));
}

TEST_CASE("hf_config: GPT-2") {
  const ModelSpec m = model_from_hf_config(sample("GPT-2"));
  CHECK(m.layers == 12);
  CHECK(m.hidden == 768);
  CHECK(m.heads == 12);
  CHECK(m.kv_heads == 12);
  CHECK(m.ffn == 4 * 768);  // n_inner absent: 4 * n_embd
  CHECK(m.vocab == 50257);
  CHECK(m.max_seq_len == 1024);
  CHECK_FALSE(m.gated_mlp);
  CHECK(m.activation == Activation::kGelu);
  CHECK(m.norm == NormKind::kLayerNorm);
  CHECK(m.position == PositionKind::kLearned);
  CHECK(m.tied_embeddings);
  CHECK(m.parameter_count() == 124'439'808.0);
  CHECK(m.parameter_count() == exasim::testing::approx(124e6).epsilon(0.01));
}

TEST_CASE("hf_config: DeepSeek-V3") {
  const ModelSpec m = model_from_hf_config(sample("DeepSeek-V3"));
  CHECK(m.layers == 61);
  CHECK(m.hidden == 7168);
  CHECK(m.heads == 128);
  REQUIRE(m.moe);
  CHECK(m.moe->experts == 256);
  CHECK(m.moe->top_k == 8);
  CHECK(m.moe->shared_experts == 1);
  CHECK(m.moe->expert_ffn == 2048);
  CHECK(m.moe->dense_layers == 3);
  CHECK(m.ffn == 18432);
  REQUIRE(m.mla);
  CHECK(m.mla->q_lora_rank == 1536);
  CHECK(m.mla->kv_lora_rank == 512);
  CHECK(m.mla->qk_rope_head_dim == 64);
  CHECK(m.mla->qk_nope_head_dim == 128);
  CHECK(m.mla->v_head_dim == 128);
  CHECK(m.head_dimension() == 192);  // query/key head: nope + rope
  // 671 B and 37 B exclude the multi-token-prediction module (num_nextn_predict_layers), as we do.
  // The gate's e_score_correction_bias (256 per MoE layer, 15K in all) is not counted.
  CHECK(m.parameter_count() == exasim::testing::approx(671e9).epsilon(0.01));
  // We get 37.55 B: the published 37 B is rounded and, by its size, leaves out the input embedding
  // (0.93 B), of which a token reads one row; we count it whole like every other total here.
  CHECK(m.active_parameter_count() == exasim::testing::approx(37e9).epsilon(0.02));
}

TEST_CASE("hf_config: a model directory is accepted, and _name_or_path names the model") {
  CHECK(model_from_hf_config(std::string(EXASIM_TEST_DATA) + "/hf/GPT-2").name == "GPT-2");
  const std::string path = write_temp("named", R"({"_name_or_path": "org/tiny", "model_type": "llama",
    "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128,
    "vocab_size": 100})");
  const ModelSpec m = model_from_hf_config(path);
  CHECK(m.name == "org/tiny");
  CHECK(m.kv_heads == 4);  // no num_key_value_heads: multi-head attention
  CHECK(m.head_dimension() == 16);
}

TEST_CASE("hf_config: GPT-2 with n_inner null") {
  const std::string path = write_temp("gpt2_null", R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64,
    "n_head": 4, "n_inner": null, "vocab_size": 100, "n_positions": 32})");
  const ModelSpec m = model_from_hf_config(path);
  CHECK(m.ffn == 256);
  CHECK(m.name == "exasim_hf_test_gpt2_null");
}

TEST_CASE("hf_config: unknown family falls back on the fields") {
  const std::string path = write_temp("unknown", R"({"model_type": "something_new", "num_hidden_layers": 2,
    "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
    "hidden_act": "gelu", "layer_norm_eps": 1e-5, "tie_word_embeddings": true, "multi_query": true})");
  const ModelSpec m = model_from_hf_config(path);
  CHECK_FALSE(m.gated_mlp);
  CHECK(m.norm == NormKind::kLayerNorm);
  CHECK(m.tied_embeddings);
  CHECK(m.kv_heads == 1);
}

TEST_CASE("hf_config: a missing file is an IoError naming the path") {
  const std::string path = std::string(EXASIM_TEST_DATA) + "/hf/no-such-model/config.json";
  const IoError e = error_of<IoError>(path);
  CHECK(e.where().file == path);
  CHECK(e.describe().find("no-such-model") != std::string::npos);
}

TEST_CASE("hf_config: hostile JSON (deep nesting, a number beyond a double) is a located error, not a crash") {
  // Issue 29's fuzzing: 10,000 nested brackets overflowed the stack (SIGSEGV); 1e400 escaped as an
  // internal error (nlohmann's out_of_range, exit 4).
  const ConfigError deep = error_of<ConfigError>(write_temp("deep", std::string(10000, '[') + std::string(10000, ']')));
  CHECK(deep.where().line == 1);
  CHECK(std::string(deep.what()).find("nested deeper than 64 levels") != std::string::npos);
  const ConfigError huge = error_of<ConfigError>(
      write_temp("huge", "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 1e400\n}\n"));
  CHECK(huge.where().line == 3);
  CHECK(std::string(huge.what()).find("1e400") != std::string::npos);
}

TEST_CASE("hf_config: dimensions beyond any model's are refused before they overflow") {
  // Issue 29's fuzzing: n_embd of 2^62 overflowed the parameter count; 2^64 - 1 wrapped to -1.
  for (const char* value : {"4611686018427387904", "18446744073709551615", "16777217"}) {
    CAPTURE(value);
    const ConfigError e = error_of<ConfigError>(write_temp("huge_dim", std::string("{\n  \"model_type\": \"gpt2\",\n  \"n_embd\": ") +
                                                                          value + ",\n  \"n_layer\": 2, \"n_head\": 2, \"vocab_size\": 100\n}\n"));
    CHECK(e.where().key == "n_embd");
    CHECK(std::string(e.what()).find("out of range") != std::string::npos);
  }
}

TEST_CASE("hf_config: bad JSON is a ConfigError with its line") {
  const std::string path = write_temp("bad_json", "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 64,\n"
                                                  "  \"vocab_size\" 100\n}\n");
  const ConfigError e = error_of<ConfigError>(path);
  CHECK(e.where().file == path);
  CHECK(e.where().line == 4);
  CHECK(std::string(e.what()).find("invalid JSON") != std::string::npos);

  const ConfigError truncated = error_of<ConfigError>(write_temp("truncated", "{\n  \"a\": 1,\n"));
  CHECK(truncated.where().line == 3);
  CHECK(error_of<ConfigError>(write_temp("array", "[1, 2]")).where().line == 1);
}

TEST_CASE("hf_config: a missing field names the key and the names tried") {
  const std::string path = write_temp("missing", R"({"model_type": "llama", "hidden_size": 64,
    "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})");
  const ConfigError e = error_of<ConfigError>(path);
  CHECK(e.where().key == "num_hidden_layers");
  CHECK(e.hint().find("n_layer") != std::string::npos);
  CHECK(e.describe().find("num_hidden_layers") != std::string::npos);
}

TEST_CASE("hf_config: malformed values name the key and its line") {
  const std::string text = std::string(kTinyLlama);
  std::string bad = text;
  bad.replace(bad.find("\"hidden_size\": 64"), 17, "\"hidden_size\": \"big\"");
  const ConfigError wrong_type = error_of<ConfigError>(write_temp("wrong_type", bad));
  CHECK(wrong_type.where().key == "hidden_size");
  CHECK(wrong_type.where().line == 4);

  bad = text;
  bad.replace(bad.find("\"num_hidden_layers\": 2"), 22, "\"num_hidden_layers\": 0");
  CHECK(error_of<ConfigError>(write_temp("zero", bad)).where().key == "num_hidden_layers");

  bad = text;
  bad.replace(bad.find("\"vocab_size\": 100"), 17, "\"vocab_size\": 100, \"num_key_value_heads\": 3");
  CHECK(error_of<ConfigError>(write_temp("kv", bad)).where().key == "num_key_value_heads");

  bad = text;
  bad.replace(bad.find("\"vocab_size\": 100"), 17, "\"vocab_size\": 100, \"hidden_act\": \"tanhshrink\"");
  CHECK(error_of<ConfigError>(write_temp("act", bad)).where().key == "hidden_act");

  bad = text;
  bad.replace(bad.find("\"vocab_size\": 100"), 17,
              "\"vocab_size\": 100, \"num_local_experts\": 4, \"num_experts_per_tok\": 5");
  CHECK(error_of<ConfigError>(write_temp("topk", bad)).where().key == "num_experts_per_tok");

  CHECK(model_from_hf_config(write_temp("tiny", text)).parameter_count() > 0);
}

TEST_CASE("hf_config: sliding windows from layer_types, sliding_window and its pattern, unused ones ignored") {
  // GPT-OSS: alternating layer kinds from a sliding layer 0.
  const std::string oss = R"({"model_type": "gpt_oss", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 100, "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]})";
  const ModelSpec m = model_from_hf_config(write_temp("oss", oss));
  CHECK(m.sliding_window == 128);
  CHECK(m.sliding_window_pattern == 2);
  CHECK(m.attention_window(0) == 128);
  CHECK(m.attention_window(1) == 0);
  // Mistral v0.1: every layer slides. Gemma 3: every 6th layer full.
  std::string mistral = kTinyLlama;
  mistral.insert(mistral.rfind('}'), R"(, "sliding_window": 4096)");
  CHECK(model_from_hf_config(write_temp("mistral", mistral)).attention_window(1) == 4096);
  std::string gemma = kTinyLlama;
  gemma.insert(gemma.rfind('}'), R"(, "sliding_window": 512, "sliding_window_pattern": 2)");
  CHECK(model_from_hf_config(write_temp("gemma", gemma)).attention_window(1) == 0);
  // Gemma 2 alternates without saying so in config.json.
  const std::string gemma2 = R"({"model_type": "gemma2", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 100, "sliding_window": 4096})";
  const ModelSpec g2 = model_from_hf_config(write_temp("gemma2", gemma2));
  CHECK(g2.attention_window(0) == 4096);
  CHECK(g2.attention_window(1) == 0);
  // Qwen2 writes a window it does not use (use_sliding_window: false); Mixtral writes null.
  CHECK(model_from_hf_config(sample("Qwen2-7B")).sliding_window == 0);
  CHECK(model_from_hf_config(sample("Mixtral-8x7B")).sliding_window == 0);
  // A mix that is not "every p-th layer full" is refused, naming the key.
  std::string mixed = oss;
  mixed.replace(mixed.find("\"full_attention\", \"sliding_attention\", \"full_attention\""),
                std::string("\"full_attention\", \"sliding_attention\", \"full_attention\"").size(),
                "\"full_attention\", \"full_attention\", \"sliding_attention\"");
  const ConfigError e = error_of<ConfigError>(write_temp("mixed", mixed));
  CHECK(std::string(e.what()).find("not modelled") != std::string::npos);
  CHECK(e.where().key == "layer_types");
}
