#include "apps/cli/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "hw/units.hpp"

namespace exasim::cli {

namespace {

// Width on a terminal: UTF-8 code points, not bytes, so "µs" or "×" does not skew the columns.
std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void print_cell(std::ostream& out, const std::string& text, std::size_t width, bool right, bool last) {
  const std::size_t pad = width - std::min(width, display_width(text));
  if (right) out << std::string(pad, ' ') << text;
  else out << text << (last ? "" : std::string(pad, ' '));
}

}  // namespace

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)), right_(headers_.size(), false) {}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() > headers_.size()) {
    throw std::invalid_argument("table row has " + std::to_string(cells.size()) + " cells for " +
                                std::to_string(headers_.size()) + " columns");
  }
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void Table::set_align_right(std::size_t column) {
  if (column >= right_.size()) throw std::out_of_range("table has no column " + std::to_string(column));
  right_[column] = true;
}

void Table::print(std::ostream& out) const {
  const std::size_t n = headers_.size();
  std::vector<std::size_t> width(n);
  for (std::size_t c = 0; c < n; ++c) {
    width[c] = display_width(headers_[c]);
    for (const auto& row : rows_) width[c] = std::max(width[c], display_width(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < n; ++c) {
      if (c > 0) out << "  ";
      print_cell(out, cells[c], width[c], right_[c], c + 1 == n);
    }
    out << "\n";
  };
  line(headers_);
  std::vector<std::string> rule(n);
  for (std::size_t c = 0; c < n; ++c) rule[c] = std::string(width[c], '-');
  line(rule);
  for (const auto& row : rows_) line(row);
}

std::string fmt_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, decimals), v);
  std::string s = buf;
  // Rounding can leave "-0.00"; a sign on zero only confuses readers.
  if (s.starts_with('-') && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string fmt_percent(double fraction, int decimals) { return fmt_fixed(fraction * 100.0, decimals) + "%"; }

std::string fmt_long_duration(double seconds) {
  if (seconds >= 2 * 86400) return fmt_fixed(seconds / 86400, 2) + " d";
  if (seconds >= 2 * 3600) return fmt_fixed(seconds / 3600, 2) + " h";
  return units::format(seconds, units::Dimension::kTime, 4);
}

}  // namespace exasim::cli
