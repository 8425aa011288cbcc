#include "traces/civil_time.hpp"

#include <doctest/doctest.h>

#include <string>

using exasim::traces::days_from_civil;
using exasim::traces::parse_seconds_ns;
using exasim::traces::parse_timestamp_ns;

namespace {
constexpr std::int64_t kS = 1'000'000'000;
}

// Expected day counts and epoch seconds were computed with Python's datetime, independently.
TEST_CASE("civil time: days from civil dates across leap rules") {
  CHECK(days_from_civil(1970, 1, 1) == 0);
  CHECK(days_from_civil(1969, 12, 31) == -1);
  CHECK(days_from_civil(2024, 2, 29) == 19782);   // leap year
  CHECK(days_from_civil(2100, 3, 1) == 47541);    // 2100 is not a leap year
  CHECK(days_from_civil(1600, 3, 1) == -135080);  // 1600 is (divisible by 400)
}

TEST_CASE("civil time: Azure 2023 timestamps with 7 fractional digits are exact") {
  CHECK(parse_timestamp_ns("2023-11-16 18:17:03.9799600") == 1700158623 * kS + 979960000);
  CHECK(parse_timestamp_ns("2023-11-16T18:17:03.9799600") == 1700158623 * kS + 979960000);
  const auto a = parse_timestamp_ns("2023-11-16 18:15:46.6805900");
  const auto b = parse_timestamp_ns("2023-11-16 18:15:50.9951690");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(*b - *a == 4'314'579'000);
}

TEST_CASE("civil time: offsets are subtracted to give UTC") {
  const auto utc = parse_timestamp_ns("2024-05-10 00:00:03.5+00:00");
  REQUIRE(utc);
  CHECK(parse_timestamp_ns("2024-05-10 00:00:03.5Z") == *utc);
  CHECK(parse_timestamp_ns("2024-05-10 02:00:03.5+02:00") == *utc);
  CHECK(parse_timestamp_ns("2024-05-09 21:00:03.5-03:00") == *utc);
  CHECK(parse_timestamp_ns("2024-05-10 05:30:03.5+0530") == *utc);
  // Across midnight and a month end.
  CHECK(*parse_timestamp_ns("2024-03-01 00:00:00") - *parse_timestamp_ns("2024-02-29 23:59:59.75") == 250'000'000);
}

TEST_CASE("civil time: mixed sub-second precision, extra digits truncated") {
  const auto base = *parse_timestamp_ns("2024-05-10 00:00:00");
  CHECK(*parse_timestamp_ns("2024-05-10 00:00:00.1+00:00") - base == 100'000'000);
  CHECK(*parse_timestamp_ns("2024-05-10 00:00:00.009930+00:00") - base == 9'930'000);
  CHECK(*parse_timestamp_ns("2024-05-10 00:00:00.123456789") - base == 123'456'789);
  CHECK(*parse_timestamp_ns("2024-05-10 00:00:00.1234567891") - base == 123'456'789);
}

TEST_CASE("civil time: malformed timestamps are rejected with a reason") {
  for (const char* bad : {"2023-02-29 00:00:00", "2023-11-31 10:00:00", "2023-13-01 00:00:00", "2023-11-16 24:00:00",
                          "2023-11-16 18:60:00", "2023-11-16", "2023-11-16 18:17:03.", "2023-11-16 18:17:03 +00:00",
                          "2023-11-16 18:17:03+0:00", "16/11/2023 18:17:03", "", "2023-11-16 18:17:03.5x"}) {
    std::string why;
    CHECK_MESSAGE(!parse_timestamp_ns(bad, &why), bad);
    CHECK_MESSAGE(!why.empty(), bad);
  }
}

TEST_CASE("civil time: decimal seconds") {
  CHECK(parse_seconds_ns("12") == 12 * kS);
  CHECK(parse_seconds_ns("350.5") == 350 * kS + 500'000'000);
  CHECK(parse_seconds_ns("0.0000001") == 100);
  CHECK(parse_seconds_ns(".25") == 250'000'000);
  for (const char* bad : {"", "-1", "1e3", "abc", ".", "1.2.3", " 1"}) CHECK_MESSAGE(!parse_seconds_ns(bad), bad);
}

TEST_CASE("civil time: timestamps whose nanoseconds would overflow are refused, the edges kept") {
  // Issue 29's fuzzing: year 9999 overflowed the signed nanosecond count (UB) and was then
  // reported as "time goes backwards"; so did a seconds column of 20 digits.
  std::string why;
  CHECK_FALSE(parse_timestamp_ns("9999-12-31 23:59:59", &why));
  CHECK(why == "year 9999 is outside 1970-2200");
  CHECK_FALSE(parse_timestamp_ns("1969-12-31 23:59:59"));
  CHECK(parse_timestamp_ns("1970-01-01 00:00:00") == 0);
  // 2200-12-31 23:59:59: 2201-01-01 is 84371 days after 1970 (231 years, 56 leap days).
  CHECK(parse_timestamp_ns("2200-12-31 23:59:59.999999999") == (84371LL * 86400 - 1) * kS + 999'999'999);
  constexpr std::int64_t kMaxWhole = 9'223'372'035;  // (2^63 - 1 - 999999999) / 1e9
  CHECK(parse_seconds_ns("9223372035.999999999") == kMaxWhole * kS + 999'999'999);
  CHECK_FALSE(parse_seconds_ns("9223372036", &why));
  CHECK(why.find("292 years") != std::string::npos);
  CHECK_FALSE(parse_seconds_ns("99999999999999999999.5"));
}
