#include "hw/config/json_text.hpp"

#include <algorithm>

#include "hw/error.hpp"

namespace exasim::config {

int line_of(std::string_view text, std::size_t byte) {
  const auto end = text.begin() + static_cast<std::ptrdiff_t>(std::min(byte, text.size()));
  return 1 + static_cast<int>(std::count(text.begin(), end, '\n'));
}

namespace {

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line L, column C: ".
std::string reason(const nlohmann::json::exception& e) {
  std::string what = e.what();
  const auto bracket = what.find("] ");
  if (bracket != std::string::npos) what = what.substr(bracket + 2);
  const auto colon = what.find(": ");
  if (what.rfind("parse error", 0) == 0 && colon != std::string::npos) what = what.substr(colon + 2);
  return what;
}

// Where a number nlohmann could not hold sits: its message quotes it ("number overflow parsing '1e400'").
std::size_t byte_of_quoted(std::string_view text, const std::string& what) {
  const auto open = what.find('\'');
  const auto close = open == std::string::npos ? open : what.find('\'', open + 1);
  if (close == std::string::npos) return 0;
  const auto at = text.find(what.substr(open + 1, close - open - 1));
  return at == std::string_view::npos ? 0 : at;
}

struct TooDeep {
  std::size_t byte;
};

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& file, int first_line, const std::string& hint) {
  using nlohmann::json;
  auto located = [&](std::size_t byte, const std::string& what) {
    return ConfigError("invalid JSON: " + what, SourceLocation{file, first_line - 1 + line_of(text, byte), {}}, hint);
  };
  // The parser itself keeps its nesting on the heap; the depth is bounded before a deep value
  // reaches the recursive serializer and destructor. The callback sees each opening bracket.
  auto depth_guard = [&](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) && depth >= kMaxJsonDepth) {
      // The byte is not passed to callbacks: the first bracket past the limit, counted from the text.
      int level = 0;
      std::size_t i = 0;
      for (; i < text.size(); ++i) {
        if (text[i] == '[' || text[i] == '{') ++level;
        if (text[i] == ']' || text[i] == '}') --level;
        if (level > kMaxJsonDepth) break;
      }
      throw TooDeep{i < text.size() ? i : 0};
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), depth_guard);
  } catch (const TooDeep& d) {
    throw located(d.byte, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  } catch (const json::parse_error& e) {
    // nlohmann's byte is 1-based and points at the last character read.
    throw located(e.byte > 0 ? e.byte - 1 : 0, reason(e));
  } catch (const json::out_of_range& e) {
    const std::string what = reason(e);
    throw located(byte_of_quoted(text, what), what + " (beyond a double)");
  } catch (const json::exception& e) {
    throw located(0, reason(e));
  }
}

std::string to_json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace exasim::config
