#pragma once
// Import of a model architecture from a HuggingFace `config.json`.
// Recognised families: Llama, Mistral, Mixtral, Qwen2, DeepSeek-V2/V3, GPT-NeoX, GPT-2; other
// model types are read with Llama-like defaults, overridden by whatever fields the file carries.
#include <string>

#include "workloads/model/model_spec.hpp"

namespace exasim::workloads {

// Reads `path`, a config.json or a model directory that holds one. The name is the file's
// `_name_or_path` when present, else the name of the directory that holds the file.
// Throws IoError when the file cannot be read, ConfigError when it is not valid JSON (with the line)
// or a required field is missing or malformed (naming the field names that were tried).
ModelSpec model_from_hf_config(const std::string& path);

}  // namespace exasim::workloads
