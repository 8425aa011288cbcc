#pragma once
// Builds a spec from layers of YAML mappings (catalog entry first, then overrides), using a
// table of known keys. Unknown keys and missing required keys are ConfigErrors that name the
// place; later layers replace earlier values key by key.
#include <set>
#include <span>
#include <string>
#include <vector>

#include "hw/config/node.hpp"

namespace exasim::config {

template <class T>
struct Field {
  std::string_view key;
  void (*apply)(T& spec, const Node& value);
  bool required = true;
};

template <class T>
T build_from_layers(std::span<const Field<T>> table, const std::vector<Node>& layers, T spec = {},
                    std::span<const std::string_view> extra_keys = {}) {
  std::vector<std::string> allowed(extra_keys.begin(), extra_keys.end());
  allowed.emplace_back("base");  // names the catalog entry an override layer starts from
  for (const auto& f : table) allowed.emplace_back(f.key);
  std::set<std::string_view> seen;
  for (const Node& layer : layers) {
    layer.check_keys(allowed);
    for (const auto& f : table) {
      if (!layer.has(f.key)) continue;
      f.apply(spec, layer[f.key]);
      seen.insert(f.key);
    }
  }
  for (const auto& f : table) {
    if (f.required && !seen.contains(f.key)) layers.back().required(f.key);  // throws, naming the key
  }
  return spec;
}

}  // namespace exasim::config
