#pragma once
// A YAML node that knows where it came from (file, line, dotted key), so every error it raises
// names the place and the fix. Typed accessors check types and units; check_keys() rejects
// unknown keys with a "did you mean" hint.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hw/error.hpp"
#include "hw/units.hpp"

namespace exasim::config {

// Limits on a YAML input, checked when it is read (load_file, load_string, apply_override), each a
// ConfigError with file and line: a file of more than kMaxYamlBytes; nesting deeper than
// kMaxYamlDepth; a map key that is not a name (`? [a]: b`, `? :`); a document of more than
// kMaxYamlNodes values, counting an alias wherever it is used (an alias bomb: 2.2 KB of anchors
// inside anchors expanding to 2^20 values ran 45-90 s and 4 GB in the readers).
inline constexpr std::uintmax_t kMaxYamlBytes = 16u << 20;
inline constexpr int kMaxYamlDepth = 64;
inline constexpr std::size_t kMaxYamlNodes = 1'000'000;

// The file a tree was read from, and which dotted keys were replaced by --set on the command line
// (errors on those name the override, not the file).
struct Origin {
  std::string file;
  std::set<std::string> overridden;
};

class Node {
 public:
  Node() = default;
  Node(YAML::Node node, std::shared_ptr<Origin> origin, std::string path);

  const YAML::Node& yaml() const { return node_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return origin_->file; }
  std::shared_ptr<Origin> origin() const { return origin_; }
  SourceLocation where() const;
  // Set on the command line (--set), itself or a key above it: where() then names the override.
  bool overridden() const;

  bool defined() const { return node_.IsDefined() && !node_.IsNull(); }
  bool is_map() const { return node_.IsMap(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_sequence() const { return node_.IsSequence(); }

  bool has(std::string_view key) const;
  Node operator[](std::string_view key) const;   // undefined node (with path) if absent
  Node required(std::string_view key) const;     // throws "missing required key"
  Node at(std::size_t index) const;              // sequence element
  std::size_t size() const { return node_.size(); }
  std::vector<std::string> keys() const;         // map keys in file order

  std::string as_string() const;
  bool as_bool() const;
  double as_number() const;                      // finite number, no unit
  long long as_int() const;                      // integral number
  long long as_positive_int() const;             // >= 1
  long long as_nonnegative_int() const;          // >= 0
  // Counts held in an int (GPUs, layers, batch sizes): as above, and at most 2^31 - 1, so that a
  // typo like 1e12 is an error naming the key instead of a wrapped-around value.
  int as_positive_count() const;                 // 1 .. 2^31 - 1
  int as_count() const;                          // 0 .. 2^31 - 1
  double as_quantity(units::Dimension d) const;  // "900 GB/s" -> SI; bare number = SI
  double as_positive_quantity(units::Dimension d) const;     // > 0
  double as_nonnegative_quantity(units::Dimension d) const;  // >= 0
  double as_fraction() const;                    // number in [0, 1]
  // An efficiency: a fraction of a datasheet figure, in (0, 1] (above 1 would beat the hardware).
  double as_efficiency() const;
  // One of `choices`; the error lists them.
  std::string as_choice(std::initializer_list<std::string_view> choices) const;

  void expect_map() const;
  // Every key of this map must be in `allowed`; otherwise a ConfigError naming the key,
  // with the closest allowed key as a hint.
  void check_keys(std::initializer_list<std::string_view> allowed) const;
  void check_keys(const std::vector<std::string>& allowed) const;

  [[noreturn]] void fail(const std::string& what, const std::string& hint = {}) const;

 private:
  std::string child_path(std::string_view key) const;
  int fits_int(long long v) const;  // v, or an error naming this node when it exceeds an int
  std::string type_name() const;

  YAML::Node node_;
  std::shared_ptr<Origin> origin_ = std::make_shared<Origin>();
  std::string path_;
  const std::string* override_of() const;  // the --set key path this node lies under, or null
  int fallback_line_ = 0;  // the parent's line, for keys that are absent
  int key_line_ = 0;       // the line of this node's key in its parent mapping
};

// Loads a YAML file. Missing file -> IoError; syntax error -> ConfigError with its line.
Node load_file(const std::string& path);
// Parses YAML text (used for --set values and tests); `name` stands in for the file name.
Node load_string(const std::string& text, const std::string& name);

// Applies `key.path=value` to the tree (the value is parsed as YAML, so numbers, booleans, lists
// and maps keep their types). A scalar on the way, such as a catalog name, becomes {base: name}
// so that `--set cluster.gpu.hbm_bandwidth=4.8TB/s` edits a catalog GPU. Throws ConfigError on
// a malformed assignment.
void apply_override(Node& root, const std::string& assignment);

// Closest candidate by edit distance (for "did you mean" hints); empty when nothing is close.
std::string closest(std::string_view key, const std::vector<std::string>& candidates);

}  // namespace exasim::config
