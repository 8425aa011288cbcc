#pragma once
// Readers of NVIDIA AIConfigurator's measured attention tables (shared/data/kernels-aic/<gpu>/;
// ai-dynamo/aiconfigurator, Apache-2.0), TensorRT-LLM's attention op replayed in a CUDA graph
// (kernel times, SampleTiming::kKernel), latency in milliseconds:
//   context_attention_perf.csv    prefill: batch_size sequences of isl tokens each, causal,
//                                 num_heads / num_key_value_heads of head_dim, window_size (0:
//                                 none), attn_dtype (the activations'), kv_cache_dtype (also
//                                 the FMHA's compute dtype)
//   generation_attention_perf.csv one decode step per sequence: batch_size, heads, head_dim,
//                                 window_size, kv_cache_dtype, step; the cache holds isl + step
//                                 tokens (the collector's isl is 1 on every row, MANIFEST.tsv)
//   context_mla_perf.csv,         DeepSeek's multi-head latent attention, prefill and decode
//   generation_mla_perf.csv       (step as above): num_heads on the GPU, tp_size, kv_cache_dtype
//                                 (KernelSample::mla; geometry: mla_prefill_shape, mla_decode_shape)
// op names: "prefill <compute dtype>", "decode kv <kv_cache_dtype>", "mla prefill kv <dtype>" and
// "mla decode kv <dtype>", for the error tables.
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/calibration/kernel_sample.hpp"

namespace exasim::models {

// Throws IoError when the file cannot be read, ConfigError (file, line, column) on a bad row:
// an unknown dtype, a size that is not a whole number in [1, 2^31) (window, step: from 0), a
// non-positive latency, more key/value heads than query heads, more fields than the header;
// and on a table with no row.
std::vector<KernelSample> read_aic_attention_table(const std::string& path);

// True when the file looks like one of the attention or MLA tables.
bool is_aic_attention_table(const std::string& path);

}  // namespace exasim::models
