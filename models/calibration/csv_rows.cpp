#include "models/calibration/csv_rows.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "hw/error.hpp"

namespace exasim::models {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    if (!cell.empty() && cell.back() == '\r') cell.pop_back();
    out.push_back(cell);
  }
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

CsvRows::CsvRows(const std::string& path, const std::vector<std::string>& required, const std::string& what)
    : path_(path), what_(what), in_(path) {
  if (!in_) throw IoError("cannot read " + what, {path, 0, ""}, "check the path");
  std::string header;
  if (!std::getline(in_, header)) throw ConfigError("empty file", {path, 1, ""}, "expected a CSV header (" + what + ")");
  const std::vector<std::string> names = split_csv(header);
  for (std::size_t i = 0; i < names.size(); ++i) columns_[names[i]] = i;
  for (const std::string& r : required)
    if (!columns_.contains(r))
      throw ConfigError("missing column \"" + r + "\"", {path, 1, r}, "expected a " + what);
}

bool CsvRows::next() {
  std::string row;
  while (std::getline(in_, row)) {
    ++line_;
    if (row.empty() || row == "\r") continue;
    cells_ = split_csv(row);
    if (cells_.size() > columns_.size())
      throw ConfigError(std::to_string(cells_.size()) + " fields where the header names " + std::to_string(columns_.size()),
                        {path_, line_, ""}, "remove the extra field (a stray comma shifts the cells after it)");
    return true;
  }
  return false;
}

const std::string* CsvRows::cell(const std::string& name) const {
  auto it = columns_.find(name);
  if (it == columns_.end() || it->second >= cells_.size()) return nullptr;
  return &cells_[it->second];
}

const std::string& CsvRows::text(const std::string& name) const {
  const std::string* c = cell(name);
  if (!c) throw ConfigError("missing column \"" + name + "\"", {path_, line_, name}, "is this a " + what_ + "?");
  return *c;
}

double CsvRows::number(const std::string& name) const {
  const std::string& c = text(name);
  double v = 0;
  auto [ptr, ec] = std::from_chars(c.data(), c.data() + c.size(), v);
  if (c.empty() || ec != std::errc() || ptr != c.data() + c.size())
    throw ConfigError("\"" + c + "\" is not a number", {path_, line_, name}, "fix or drop the row");
  return v;
}

double CsvRows::positive(const std::string& name, const std::string& hint) const {
  const double v = number(name);
  if (!(v > 0)) throw ConfigError(name + " must be positive", {path_, line_, name}, hint);
  return v;
}

double CsvRows::count(const std::string& name, double max, const std::string& why) const {
  const double v = number(name);
  if (!(v >= 0) || v != std::floor(v))
    throw ConfigError("\"" + text(name) + "\" is not a whole number >= 0", {path_, line_, name}, "fix or drop the row");
  if (v > max) throw ConfigError("implausible " + name + " " + text(name), {path_, line_, name}, why + "; fix or drop the row");
  return v;
}

double CsvRows::positive_count(const std::string& name) const {
  const double v = count(name);
  if (v < 1) throw ConfigError(name + " must be positive", {path_, line_, name}, "fix or drop the row");
  return v;
}

bool csv_has_columns(const std::string& path, const std::vector<std::string>& columns) {
  if (!path.ends_with(".csv")) return false;
  std::ifstream in(path);
  std::string header;
  if (!in || !std::getline(in, header)) return false;
  const std::vector<std::string> cols = split_csv(header);
  return std::all_of(columns.begin(), columns.end(),
                     [&](const std::string& c) { return std::find(cols.begin(), cols.end(), c) != cols.end(); });
}

}  // namespace exasim::models
