#pragma once
// Reader of Vidur's measured operator tables (shared/data/profiles/<gpu>_<model>_ops.csv,
// microsoft/vidur, MIT): one row per (num_tokens, tensor-parallel degree) with the model dims
// (n_head, n_kv_head, n_embd, n_expanded_embd, use_gated_mlp) and time_stats.<op>.median in
// milliseconds for the ops of one transformer layer. Shapes follow from the dims and TP degree:
//   attn_pre_proj   GEMM  T x (a + 2g) hd / t x h         (QKV)
//   attn_post_proj  GEMM  T x h x a hd / t                (attention output)
//   mlp_up_proj     GEMM  T x (2 if gated) ffn / t x h    (gate + up)
//   mlp_down_proj   GEMM  T x h x ffn / t
//   input_layernorm, post_attention_layernorm   rmsnorm (layernorm when not gated) over T x h
//   attn_rope       rope over T x (a + g) hd / t
//   mlp_act         silu_mul (gelu when not gated) to T x ffn / t
//   add             residual_add over T x h
// All kernels ran in fp16/bf16 (PyTorch/vLLM), so samples carry bf16.
#include <string>
#include <vector>

#include "models/calibration/kernel_sample.hpp"

namespace exasim::models {

// Throws IoError when the file cannot be read, ConfigError (file, line, column) on a bad row.
std::vector<KernelSample> read_vidur_op_table(const std::string& path);

// The catalog GPU a Vidur table was measured on, from its file-name prefix ("a100_" ->
// "A100-SXM4-80GB", "a40_" -> "A40"); empty when the prefix is unknown.
std::string vidur_table_gpu(const std::string& path);

// True when the file looks like a Vidur op table (a CSV whose header has time_stats.* columns
// and num_tokens); used by `exasim calibrate` to pick a reader.
bool is_vidur_op_table(const std::string& path);

}  // namespace exasim::models
