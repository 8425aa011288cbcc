#include "traces/csv_reader.hpp"

#include <charconv>

#include "hw/error.hpp"

namespace exasim::traces {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string_view unquote(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

}  // namespace

void split_csv_line(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  std::size_t start = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) {
      fields.push_back(unquote(line.substr(start, i - start)));
      start = i + 1;
    }
  }
  fields.push_back(unquote(line.substr(start)));
}

CsvReader::CsvReader(const std::string& path) : lines_(path) {
  std::string_view line;
  if (!lines_.next(line) || trim(line).empty()) {
    throw ConfigError("the file is empty: a header line naming the columns is expected", SourceLocation{path, 1, ""},
                      "the first line lists the columns, e.g. TIMESTAMP,ContextTokens,GeneratedTokens");
  }
  split_csv_line(line, fields_);
  for (auto f : fields_) header_.emplace_back(f);
}

bool CsvReader::has_column(std::string_view name) const {
  for (const auto& h : header_)
    if (h == name) return true;
  return false;
}

CsvReader::Column CsvReader::column(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return {i, std::string(name)};
  std::string list;
  for (const auto& h : header_) list += (list.empty() ? "" : ",") + h;
  throw ConfigError("the header has no column \"" + std::string(name) + "\"", SourceLocation{path(), 1, std::string(name)},
                    "the header line is \"" + list + "\"; is this the right file and format?");
}

bool CsvReader::next() {
  std::string_view line;
  while (lines_.next(line)) {
    if (trim(line).empty()) continue;
    split_csv_line(line, fields_);
    return true;
  }
  return false;
}

std::string_view CsvReader::text(const Column& c) const {
  if (c.index >= fields_.size()) {
    fail(c, "missing column (the row has " + std::to_string(fields_.size()) + " fields, the header " +
                std::to_string(header_.size()) + ")",
         "every row needs a value for each column of the header");
  }
  return fields_[c.index];
}

std::int64_t CsvReader::tokens(const Column& c) const {
  const std::string_view s = text(c);
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const char* end = s.data() + s.size();
  bool ok = ec == std::errc() && ptr != s.data();
  if (ok && ptr != end) {  // "12.0" from a float-typed column: only zeros may follow the point
    const char* p = ptr;
    ok = *p++ == '.';
    while (ok && p != end) ok = *p++ == '0';
  }
  if (!ok) fail(c, "expected a whole number of tokens, got \"" + std::string(s) + "\"");
  if (v < 0) fail(c, "token count must not be negative, got " + std::string(s));
  return v;
}

void CsvReader::fail(const Column& c, const std::string& what, const std::string& hint) const {
  throw ConfigError(what, SourceLocation{path(), static_cast<int>(line_number()), c.name}, hint);
}

}  // namespace exasim::traces
