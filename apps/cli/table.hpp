#pragma once
// A plain-text table for command output: columns sized to their content, a dashed rule under the
// header, numeric columns right-aligned so that digits line up.
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace exasim::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers);

  // A row must have at most as many cells as there are headers; missing cells print empty.
  void add_row(std::vector<std::string> cells);
  void set_align_right(std::size_t column);
  bool empty() const { return rows_.empty(); }

  // Columns are separated by two spaces; lines carry no trailing spaces.
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> right_;
};

// `v` with exactly `decimals` digits after the point ("3.14"); never prints "-0".
std::string fmt_fixed(double v, int decimals);
// A fraction as a percentage: fmt_percent(0.4567, 1) == "45.7%".
std::string fmt_percent(double fraction, int decimals);
// A job's wall-clock time in days ("54.00 d") or hours ("3.09 h") from two of them up, else with
// an SI prefix ("900 s").
std::string fmt_long_duration(double seconds);

}  // namespace exasim::cli
