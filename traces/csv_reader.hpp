#pragma once
// A streaming CSV reader for trace files: a header line naming the columns, then one row a line.
// Columns are found by name, so their order does not matter. Every problem in a row is a
// ConfigError naming the file, the 1-based line and the column.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/line_reader.hpp"

namespace exasim::traces {

// Splits one line at commas. A field in double quotes may contain commas; the quotes are
// removed ("" inside is left as is: trace fields are numbers and plain names).
void split_csv_line(std::string_view line, std::vector<std::string_view>& fields);

class CsvReader {
 public:
  struct Column {
    std::size_t index = 0;
    std::string name;
  };

  // Opens `path` and reads its header line (IoError if unreadable, ConfigError if empty).
  explicit CsvReader(const std::string& path);

  // The column called `name` (surrounding spaces ignored); a ConfigError on the header line
  // listing the columns that are there if it is absent.
  Column column(std::string_view name) const;
  bool has_column(std::string_view name) const;
  const std::vector<std::string>& header() const { return header_; }

  // Moves to the next row, skipping blank lines; false at end of file.
  bool next();
  // The field of `c` in the current row, spaces trimmed; a ConfigError if the row is too short.
  std::string_view text(const Column& c) const;
  // A token count: a whole number >= 0 ("12.0" is accepted as 12).
  std::int64_t tokens(const Column& c) const;

  [[noreturn]] void fail(const Column& c, const std::string& what, const std::string& hint = {}) const;
  long long line_number() const { return lines_.line_number(); }
  const std::string& path() const { return lines_.path(); }

 private:
  LineReader lines_;
  std::vector<std::string> header_;
  std::vector<std::string_view> fields_;
};

}  // namespace exasim::traces
