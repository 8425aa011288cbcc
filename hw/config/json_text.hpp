#pragma once
// JSON from outside the program (HuggingFace config.json, Mooncake trace lines, runner profiles):
// parsed with stated limits, every failure a ConfigError at the file and line it happened on.
// Limits: nesting deeper than kMaxJsonDepth (no file these readers take nests past ~5 levels;
// 10,000 levels of `[[[` would otherwise recurse through the serializer), numbers beyond a double
// (1e400) named with their line instead of escaping as nlohmann's out_of_range.
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace exasim::config {

inline constexpr int kMaxJsonDepth = 64;

// 1-based line of byte offset `byte` in `text`.
int line_of(std::string_view text, std::size_t byte);

// Parses `text`, read from `file` starting at line `first_line` (a JSON-lines record: its line in
// the file). Throws ConfigError("invalid JSON: ...", {file, line}) with `hint`.
nlohmann::json parse_json_text(std::string_view text, const std::string& file, int first_line = 1,
                               const std::string& hint = {});

// `j` as JSON text (indented by `indent`, or compact), valid whatever bytes its strings carry: a
// scenario name or a path with invalid UTF-8 comes out with U+FFFD in their place, where
// nlohmann's dump would throw (type_error 316).
std::string to_json_text(const nlohmann::json& j, int indent = -1);

}  // namespace exasim::config
