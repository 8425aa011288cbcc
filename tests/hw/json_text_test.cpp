// JSON from outside the program: limits and located errors (hw/config/json_text.hpp).
#include <doctest/doctest.h>

#include <string>

#include "hw/config/json_text.hpp"
#include "hw/error.hpp"

using exasim::ConfigError;
using exasim::config::kMaxJsonDepth;
using exasim::config::parse_json_text;

namespace {

ConfigError error_of(const std::string& text, int first_line = 1) {
  try {
    parse_json_text(text, "in.json", first_line, "the hint");
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("no error for: " << text.substr(0, 60));
  return ConfigError("", {});
}

std::string nested(int depth) { return std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']'); }

}  // namespace

TEST_CASE("json text: nesting up to the limit parses, one level more is refused at its line") {
  CHECK(parse_json_text(nested(kMaxJsonDepth), "in.json").is_array());
  const ConfigError e = error_of("{\"a\":\n" + nested(kMaxJsonDepth) + "}");  // the object is level 1
  CHECK(e.where().file == "in.json");
  CHECK(e.where().line == 2);
  CHECK(std::string(e.what()).find("nested deeper than 64 levels") != std::string::npos);
  CHECK(e.hint() == "the hint");
  CHECK(error_of(nested(100000)).where().line == 1);  // far past the limit: no stack overflow
}

TEST_CASE("json text: syntax errors and numbers beyond a double name their line, offset by the record's") {
  const ConfigError syntax = error_of("{\n  \"a\": 1,\n  \"b\" 2\n}");
  CHECK(syntax.where().line == 3);
  CHECK(std::string(syntax.what()).find("invalid JSON") == 0);
  const ConfigError huge = error_of("{\n  \"a\": 1,\n  \"b\": -1e400\n}");
  CHECK(huge.where().line == 3);
  CHECK(std::string(huge.what()).find("1e400") != std::string::npos);
  // A JSON-lines record at line 41 of its file.
  CHECK(error_of("{\"t\": 1e999}", 41).where().line == 41);
  // What a double holds is read as written.
  CHECK(parse_json_text("{\"a\": 1e308}", "in.json")["a"].get<double>() == 1e308);
}

TEST_CASE("json text: output stays valid JSON whatever bytes its strings carry") {
  const nlohmann::json j = {{"name", std::string("a\xff") + "b"}, {"x", 1}};
  CHECK_THROWS(j.dump());  // what nlohmann does by default (type_error 316)
  const std::string text = exasim::config::to_json_text(j);
  CHECK(text == "{\"name\":\"a\xef\xbf\xbd" "b\",\"x\":1}");
  CHECK(parse_json_text(text, "out.json")["name"] == "a\xef\xbf\xbd" "b");
  CHECK(exasim::config::to_json_text(j, 2).find("\n  \"name\"") != std::string::npos);
}
