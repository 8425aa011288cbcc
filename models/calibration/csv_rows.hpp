#pragma once
// Rows of a measured-data CSV table (Vidur op tables, AIConfigurator kernel tables): cells by
// column name, numbers parsed strictly, every problem reported with the file, line and column.
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace exasim::models {

std::vector<std::string> split_csv(const std::string& line);

// True when `path` is a .csv file whose header names every one of `columns` (format detection).
bool csv_has_columns(const std::string& path, const std::vector<std::string>& columns);

class CsvRows {
 public:
  // Opens `path` and reads its header. Throws IoError when it cannot be read, ConfigError when
  // it is empty or misses one of `required` (`what` names the table kind for the hint).
  CsvRows(const std::string& path, const std::vector<std::string>& required, const std::string& what);

  // The next non-empty row; false at the end of the file. Throws ConfigError on a row with more
  // fields than the header names (a stray comma shifts every cell after it).
  bool next();

  int line() const { return line_; }
  const std::string& path() const { return path_; }
  bool has_column(const std::string& name) const { return columns_.contains(name); }
  // The cell in column `name` of this row; null when the column is absent or the row short.
  const std::string* cell(const std::string& name) const;
  // The cell as a number; throws ConfigError naming the file, line and column otherwise.
  double number(const std::string& name) const;
  // A cell that must be present (throws ConfigError when the column or the cell is missing).
  const std::string& text(const std::string& name) const;
  // The cell as a number > 0; throws ConfigError otherwise ("<name> must be positive", `hint`).
  double positive(const std::string& name, const std::string& hint = "fix or drop the row") const;
  // The kernels index their operands with 32-bit integers (cuBLAS, CUTLASS, TensorRT-LLM's
  // attention): no dimension, token or head count of one call is above this.
  static constexpr double kMaxCount = 2147483647.0;
  // The cell as a count: a whole number in [0, max]; throws ConfigError otherwise, with `why`
  // the bound as the hint.
  double count(const std::string& name, double max = kMaxCount,
               const std::string& why = "one kernel call indexes at most 2^31 - 1 of anything") const;
  // A count of at least one (sequences, tokens, heads, experts, ranks); ConfigError otherwise.
  double positive_count(const std::string& name) const;

 private:
  std::string path_, what_;
  std::ifstream in_;
  std::map<std::string, std::size_t> columns_;
  std::vector<std::string> cells_;
  int line_ = 1;
};

}  // namespace exasim::models
