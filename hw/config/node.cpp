#include "hw/config/node.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace exasim::config {

Node::Node(YAML::Node node, std::shared_ptr<Origin> origin, std::string path)
    : node_(std::move(node)), origin_(std::move(origin)), path_(std::move(path)) {}

const std::string* Node::override_of() const {
  for (const auto& o : origin_->overridden)
    if (path_ == o || path_.starts_with(o + ".")) return &o;
  return nullptr;
}

bool Node::overridden() const { return override_of() != nullptr; }

SourceLocation Node::where() const {
  // A key replaced on the command line (or inside one) is reported as the override.
  if (const std::string* o = override_of()) return {"--set " + *o, 0, path_};
  int line = fallback_line_;
  if (key_line_ > 0) line = key_line_;  // a block mapping's own mark is its first entry's line
  else if (node_.IsDefined() && node_.Mark().line >= 0) line = node_.Mark().line + 1;
  return {origin_->file, line, path_};
}

void Node::fail(const std::string& what, const std::string& hint) const {
  throw ConfigError(what, where(), hint);
}

std::string Node::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::string Node::type_name() const {
  if (!node_.IsDefined() || node_.IsNull()) return "nothing";
  if (node_.IsMap()) return "a mapping";
  if (node_.IsSequence()) return "a list";
  return "\"" + node_.Scalar() + "\"";
}

bool Node::has(std::string_view key) const {
  return node_.IsMap() && node_[std::string(key)].IsDefined();
}

Node Node::operator[](std::string_view key) const {
  if (!node_.IsMap()) {
    Node missing(YAML::Node(YAML::NodeType::Undefined), origin_, child_path(key));
    missing.fallback_line_ = where().line;
    return missing;
  }
  // Const access so that a missing key does not insert a null into the tree.
  const YAML::Node& self = node_;
  YAML::Node child = self[std::string(key)];
  if (!child.IsDefined()) {
    // Undefined nodes have no mark; keep the parent's line so errors still point somewhere.
    Node missing(YAML::Node(YAML::NodeType::Undefined), origin_, child_path(key));
    missing.fallback_line_ = where().line;
    return missing;
  }
  Node out(child, origin_, child_path(key));
  for (const auto& kv : node_) {
    if (kv.first.Scalar() == key && kv.first.Mark().line >= 0) {
      out.key_line_ = kv.first.Mark().line + 1;
      break;
    }
  }
  return out;
}

Node Node::required(std::string_view key) const {
  expect_map();
  if (!has(key)) {
    throw ConfigError("missing required key \"" + std::string(key) + "\"", where(),
                      "add `" + std::string(key) + ":` under " + (path_.empty() ? "the top level" : path_));
  }
  return (*this)[key];
}

Node Node::at(std::size_t index) const {
  // yaml-cpp would look a mapping up by the number as a key and throw InvalidNode.
  if (!node_.IsSequence()) fail("expected a list, got " + type_name(), "write the entries as a list, one `- ` each");
  return Node(node_[index], origin_, path_ + "[" + std::to_string(index) + "]");
}

std::vector<std::string> Node::keys() const {
  std::vector<std::string> out;
  if (!node_.IsMap()) return out;
  for (const auto& kv : node_) out.push_back(kv.first.as<std::string>());
  return out;
}

std::string Node::as_string() const {
  if (!node_.IsScalar()) fail("expected a text value, got " + type_name());
  return node_.Scalar();
}

bool Node::as_bool() const {
  const std::string s = as_string();
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail("expected true or false, got \"" + s + "\"");
}

double Node::as_number() const {
  const std::string s = as_string();
  std::string why;
  auto v = units::parse(s, units::Dimension::kNone, &why);
  if (!v) fail("expected a number, got \"" + s + "\"", why);
  return *v;
}

long long Node::as_int() const {
  const double v = as_number();
  if (std::floor(v) != v || std::fabs(v) > 9e15) fail("expected a whole number, got " + node_.Scalar());
  return static_cast<long long>(v);
}

long long Node::as_positive_int() const {
  const long long v = as_int();
  if (v < 1) fail("must be at least 1, got " + node_.Scalar(), "sizes and counts are positive");
  return v;
}

long long Node::as_nonnegative_int() const {
  const long long v = as_int();
  if (v < 0) fail("must not be negative, got " + node_.Scalar());
  return v;
}

int Node::as_positive_count() const { return fits_int(as_positive_int()); }

int Node::as_count() const { return fits_int(as_nonnegative_int()); }

int Node::fits_int(long long v) const {
  if (v > std::numeric_limits<int>::max())
    fail("must be at most " + std::to_string(std::numeric_limits<int>::max()) + ", got " + node_.Scalar(), "is it a typo?");
  return static_cast<int>(v);
}

double Node::as_quantity(units::Dimension d) const {
  const std::string s = as_string();
  std::string why;
  auto v = units::parse(s, d, &why);
  if (!v) {
    fail("cannot read \"" + s + "\" as a " + std::string(units::dimension_name(d)),
         why.empty() ? "write it like \"" + std::string(units::example(d)) + "\"" : why);
  }
  return *v;
}

double Node::as_positive_quantity(units::Dimension d) const {
  const double v = as_quantity(d);
  if (!(v > 0)) fail("must be positive, got \"" + node_.Scalar() + "\"", "e.g. \"" + std::string(units::example(d)) + "\"");
  return v;
}

double Node::as_nonnegative_quantity(units::Dimension d) const {
  const double v = as_quantity(d);
  if (v < 0) fail("must not be negative, got \"" + node_.Scalar() + "\"");
  return v;
}

double Node::as_fraction() const {
  const double v = as_number();
  if (v < 0 || v > 1) fail("must be between 0 and 1, got " + node_.Scalar());
  return v;
}

double Node::as_efficiency() const {
  const double v = as_number();
  if (!(v > 0 && v <= 1)) fail("an efficiency must be in (0, 1], got " + node_.Scalar());
  return v;
}

std::string Node::as_choice(std::initializer_list<std::string_view> choices) const {
  const std::string s = as_string();
  std::string list;
  for (auto c : choices) {
    if (c == s) return s;
    list += (list.empty() ? "" : " | ") + std::string(c);
  }
  fail("\"" + s + "\" is not one of " + list, "choose one of: " + list);
}

void Node::expect_map() const {
  if (!node_.IsMap()) fail("expected a mapping of keys, got " + type_name());
}

void Node::check_keys(std::initializer_list<std::string_view> allowed) const {
  check_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void Node::check_keys(const std::vector<std::string>& allowed) const {
  expect_map();
  for (const auto& kv : node_) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    Node bad(kv.first, origin_, child_path(key));
    const std::string near = closest(key, allowed);
    std::string hint = near.empty() ? "" : "did you mean \"" + near + "\"? ";
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw ConfigError("unknown key \"" + key + "\"", bad.where(), hint + "allowed here: " + list);
  }
}

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Limits on a parsed document, checked once before any reader walks it (node.hpp).
struct DocumentWalk {
  const std::string& name;
  std::size_t nodes = 0;

  [[noreturn]] void refuse(const YAML::Node& at, const std::string& what, const std::string& hint) const {
    throw ConfigError(what, {name, at.Mark().line + 1, ""}, hint);
  }
  // Each alias counts at every place it is used: that is what the readers would walk.
  void visit(const YAML::Node& n, int depth) {
    if (++nodes > kMaxYamlNodes)
      refuse(n, "the document expands to more than " + std::to_string(kMaxYamlNodes) + " values",
             "anchors and aliases that repeat each other (*a inside &b inside &c ...) multiply; write the values out");
    if (depth > kMaxYamlDepth)
      refuse(n, "nested deeper than " + std::to_string(kMaxYamlDepth) + " levels", "no exasim file nests past ~8 levels");
    if (n.IsSequence())
      for (const YAML::Node& child : n) visit(child, depth + 1);
    if (n.IsMap())
      for (const auto& kv : n) {
        if (!kv.first.IsScalar())
          refuse(kv.first, "a mapping key must be a name, got " + std::string(kv.first.IsMap() ? "a mapping" : kv.first.IsSequence() ? "a list" : "nothing"),
                 "write `key: value` (a `? ` complex key has no name)");
        visit(kv.second, depth + 1);
      }
  }
};

void check_document(const YAML::Node& root, const std::string& name) {
  DocumentWalk walk{name};
  walk.visit(root, 0);
}

Node parse_text(const std::string& text, const std::string& name) {
  auto origin = std::make_shared<Origin>();
  origin->file = name;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError("YAML syntax error: " + e.msg, {name, e.mark.line + 1, ""},
                      "check indentation, colons and quotes on this line or the one before");
  }
  check_document(root, name);
  return Node(root, origin, "");
}

}  // namespace

std::string closest(std::string_view key, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, key.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(key, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

Node load_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw IoError("is a directory, not a YAML file", {path, 0, ""}, "give the path of a .yaml file");
  std::ifstream in(path);
  if (!in) throw IoError("cannot open file", {path, 0, ""}, "check the path; it is read relative to the current directory");
  // yaml-cpp holds ~50x a document's bytes while it parses: refuse what no exasim file needs.
  if (const auto bytes = std::filesystem::file_size(path, ec); !ec && bytes > kMaxYamlBytes)
    throw ConfigError("the file is " + std::to_string(bytes >> 20) + " MiB, more than the " + std::to_string(kMaxYamlBytes >> 20) +
                          " MiB a YAML input may be",
                      {path, 0, ""}, "scenario and catalog files are a few KB (the validation cases 260 KB); is it the right file?");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_text(buf.str(), path);
}

Node load_string(const std::string& text, const std::string& name) { return parse_text(text, name); }

void apply_override(Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  const SourceLocation here{"--set " + assignment, 0, ""};
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("an override must look like key.path=value", here, "e.g. --set training.micro_batch=2");
  const std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::ParserException& e) {
    throw ConfigError("the value is not valid YAML: " + e.msg, here, "quote it if it contains ':' or '#'");
  }
  check_document(parsed, here.file);
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const auto dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& part : parts)
    if (part.empty()) throw ConfigError("empty key in \"" + path + "\"", here, "keys are separated by single dots");
  YAML::Node cur = root.yaml();
  if (!cur.IsMap()) throw ConfigError("the scenario is not a mapping", here);
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = cur[parts[i]];
    if (next.IsScalar()) {  // a catalog name: edit a copy of the entry
      YAML::Node wrapped(YAML::NodeType::Map);
      wrapped["base"] = next.Scalar();
      cur[parts[i]] = wrapped;
      next = cur[parts[i]];
    } else if (!next.IsDefined() || next.IsNull()) {
      cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next = cur[parts[i]];
    } else if (!next.IsMap()) {
      throw ConfigError("\"" + parts[i] + "\" is a list, not a mapping", here, "override the whole list instead");
    }
    cur.reset(next);
  }
  cur[parts.back()] = parsed;
  root.origin()->overridden.insert(path);
}

}  // namespace exasim::config
