#include "traces/civil_time.hpp"

namespace exasim::traces {

namespace {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;
constexpr int kFirstYear = 1970, kLastYear = 2200;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Exactly `n` digits at text[pos...]; advances pos.
std::optional<int> fixed_digits(std::string_view text, std::size_t& pos, int n) {
  if (pos + static_cast<std::size_t>(n) > text.size()) return std::nullopt;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = text[pos++];
    if (!is_digit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

bool expect(std::string_view text, std::size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// Digits after the decimal point as nanoseconds; needs at least one digit.
std::optional<std::int64_t> fraction_ns(std::string_view text, std::size_t& pos) {
  std::int64_t ns = 0, scale = kNsPerSecond;
  const std::size_t start = pos;
  for (; pos < text.size() && is_digit(text[pos]); ++pos) {
    if (scale > 1) {
      scale /= 10;
      ns += (text[pos] - '0') * scale;
    }
  }
  if (pos == start) return std::nullopt;
  return ns;
}

unsigned days_in_month(std::int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

std::optional<std::int64_t> fail(std::string* why, const std::string& reason) {
  if (why != nullptr) *why = reason;
  return std::nullopt;
}

// "Z", "+HH:MM", "-HH:MM", "+HHMM" or nothing, as seconds east of UTC.
std::optional<std::int64_t> offset_seconds(std::string_view text, std::size_t& pos) {
  if (pos == text.size()) return 0;
  if (text[pos] == 'Z') return ++pos, 0;
  if (text[pos] != '+' && text[pos] != '-') return std::nullopt;
  const int sign = text[pos++] == '-' ? -1 : 1;
  const auto h = fixed_digits(text, pos, 2);
  if (pos < text.size() && text[pos] == ':') ++pos;
  const auto m = fixed_digits(text, pos, 2);
  if (!h || !m || *h > 23 || *m > 59) return std::nullopt;
  return sign * (*h * 3600 + *m * 60);
}

}  // namespace

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);                 // [0, 399]
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::optional<std::int64_t> parse_timestamp_ns(std::string_view text, std::string* why) {
  std::size_t pos = 0;
  const auto y = fixed_digits(text, pos, 4);
  const bool date_ok = y && expect(text, pos, '-');
  const auto mo = date_ok ? fixed_digits(text, pos, 2) : std::nullopt;
  const auto d = mo && expect(text, pos, '-') ? fixed_digits(text, pos, 2) : std::nullopt;
  if (!d) return fail(why, "expected a date like 2023-11-16 18:17:03.9799600");
  // Nanoseconds since 1970 fit a signed 64-bit count until 2262; a trace from before the Unix
  // epoch or after 2200 is a typo, not a log (year 9999 overflowed into "time goes backwards").
  if (*y < kFirstYear || *y > kLastYear)
    return fail(why, "year " + std::to_string(*y) + " is outside " + std::to_string(kFirstYear) + "-" + std::to_string(kLastYear));
  if (*mo < 1 || *mo > 12) return fail(why, "month " + std::to_string(*mo) + " is not 1-12");
  if (*d < 1 || static_cast<unsigned>(*d) > days_in_month(*y, static_cast<unsigned>(*mo)))
    return fail(why, "day " + std::to_string(*d) + " does not exist in month " + std::to_string(*mo));
  if (pos >= text.size() || (text[pos] != ' ' && text[pos] != 'T')) return fail(why, "expected a time after the date");
  ++pos;
  const auto h = fixed_digits(text, pos, 2);
  const auto mi = h && expect(text, pos, ':') ? fixed_digits(text, pos, 2) : std::nullopt;
  const auto s = mi && expect(text, pos, ':') ? fixed_digits(text, pos, 2) : std::nullopt;
  if (!s) return fail(why, "expected a time like 18:17:03");
  if (*h > 23 || *mi > 59 || *s > 59) return fail(why, "time of day out of range");
  std::int64_t ns = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const auto f = fraction_ns(text, pos);
    if (!f) return fail(why, "expected digits after the decimal point");
    ns = *f;
  }
  const auto off = offset_seconds(text, pos);
  if (!off || pos != text.size()) return fail(why, "unexpected text after the time (an offset is written +00:00)");
  const std::int64_t days = days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d));
  const std::int64_t secs = days * 86400 + *h * 3600 + *mi * 60 + *s - *off;
  return secs * kNsPerSecond + ns;
}

std::optional<std::int64_t> parse_seconds_ns(std::string_view text, std::string* why) {
  std::size_t pos = 0;
  std::int64_t whole = 0;
  // Whole seconds whose nanoseconds (plus a fraction) still fit a signed 64-bit count: ~292 years.
  constexpr std::int64_t kMaxWhole = (INT64_MAX - (kNsPerSecond - 1)) / kNsPerSecond;
  for (; pos < text.size() && is_digit(text[pos]); ++pos) {
    whole = whole * 10 + (text[pos] - '0');
    if (whole > kMaxWhole) return fail(why, "more than " + std::to_string(kMaxWhole) + " s (292 years)");
  }
  const bool has_whole = pos > 0;
  std::int64_t ns = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const auto f = fraction_ns(text, pos);
    if (f) ns = *f;
    else if (!has_whole) return fail(why, "expected a number of seconds");
  }
  if (!has_whole && pos <= 1) return fail(why, "expected a number of seconds");
  if (pos != text.size()) return fail(why, "expected a non-negative number of seconds");
  return whole * kNsPerSecond + ns;
}

}  // namespace exasim::traces
