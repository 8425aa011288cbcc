#pragma once
// Timestamps of trace rows, parsed by hand into integer nanoseconds: no locale, no time-zone
// database, no std::get_time (whose behaviour depends on the C library and the environment).
// Integers keep differences exact: an epoch time in double seconds has only ~0.2 us resolution,
// too coarse for Azure's 7 fractional digits.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace exasim::traces {

// Days from 1970-01-01 to the given proleptic Gregorian date (negative before). Howard Hinnant's
// days_from_civil; valid for any year an int64 count of days can hold.
std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day);

// "YYYY-MM-DD HH:MM:SS[.f...][Z|+HH:MM|-HH:MM|+HHMM]" (a 'T' may replace the space) as nanoseconds
// since 1970-01-01 UTC; an offset is subtracted to get UTC. Up to 9 fractional digits count, any
// more are truncated. nullopt with the reason in *why on anything else (bad field, day 31 of a
// 30-day month, hour 24, ...).
std::optional<std::int64_t> parse_timestamp_ns(std::string_view text, std::string* why = nullptr);

// A non-negative decimal number of seconds ("12", "12.5", "0.0001") as nanoseconds, exactly for
// up to 9 fractional digits (more are truncated). nullopt with the reason on anything else.
std::optional<std::int64_t> parse_seconds_ns(std::string_view text, std::string* why = nullptr);

}  // namespace exasim::traces
