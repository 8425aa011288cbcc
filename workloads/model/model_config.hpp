#pragma once
// Reading a model from a scenario: a catalog name, {base: NAME, key: value}, an inline mapping
// {layers, hidden, heads, kv_heads, ffn, vocab, moe: {experts, top_k}}, or {hf_config: path}.
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "hw/config/node.hpp"
#include "workloads/model/model_spec.hpp"

namespace exasim::workloads {

ModelSpec model_from_layers(const std::string& name, const std::vector<config::Node>& layers);
// `base_dir` resolves a relative hf_config path (the scenario file's folder).
ModelSpec resolve_model(const config::Node& ref, const hw::Catalog& catalog, const std::string& base_dir);

}  // namespace exasim::workloads
