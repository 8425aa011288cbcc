#include "hw/units.hpp"

#include <doctest/doctest.h>

#include "approx.hpp"

#include <array>
#include <cmath>
#include <string>
#include <utility>

using exasim::units::Dimension;
using exasim::units::format;
using exasim::units::parse;

namespace {

constexpr double kKi = 1024.0;

// Parses and checks the value within a relative tolerance, reporting the text on failure.
void expect_value(std::string_view text, Dimension d, double expected) {
  std::string why;
  const auto v = parse(text, d, &why);
  INFO("text: \"", std::string(text), "\" why: ", why);
  REQUIRE(v.has_value());
  CHECK(*v == exasim::testing::approx(expected).epsilon(1e-12));
}

// Expects a rejection whose reason contains `fragment`.
void expect_reject(std::string_view text, Dimension d, std::string_view fragment) {
  std::string why;
  const auto v = parse(text, d, &why);
  INFO("text: \"", std::string(text), "\" why: ", why);
  CHECK_FALSE(v.has_value());
  CHECK(why.find(fragment) != std::string::npos);
}

}  // namespace

TEST_CASE("units: byte prefixes, SI and binary") {
  expect_value("1 B", Dimension::kBytes, 1);
  expect_value("1 kB", Dimension::kBytes, 1e3);
  expect_value("1 KB", Dimension::kBytes, 1e3);
  expect_value("1 MB", Dimension::kBytes, 1e6);
  expect_value("1 GB", Dimension::kBytes, 1e9);
  expect_value("1 TB", Dimension::kBytes, 1e12);
  expect_value("1 PB", Dimension::kBytes, 1e15);
  expect_value("1 KiB", Dimension::kBytes, kKi);
  expect_value("1 MiB", Dimension::kBytes, kKi * kKi);
  expect_value("80 GiB", Dimension::kBytes, 85899345920.0);
  expect_value("1 TiB", Dimension::kBytes, std::pow(kKi, 4));
  expect_value("1 PiB", Dimension::kBytes, std::pow(kKi, 5));
  expect_value("141 GB", Dimension::kBytes, 141e9);
}

TEST_CASE("units: lowercase b is bits") {
  expect_value("8 b", Dimension::kBytes, 1);
  expect_value("8 kb", Dimension::kBytes, 1e3);
  expect_value("8 Kb", Dimension::kBytes, 1e3);
  expect_value("8 Mb", Dimension::kBytes, 1e6);
  expect_value("8 Gb", Dimension::kBytes, 1e9);
  expect_value("8 Tb", Dimension::kBytes, 1e12);
  expect_value("8 Kib", Dimension::kBytes, kKi);
  expect_value("8 Mib", Dimension::kBytes, kKi * kKi);
  expect_value("8 Gib", Dimension::kBytes, kKi * kKi * kKi);
  expect_value("8 Gbit", Dimension::kBytes, 1e9);
  // milli makes no sense for data; neither spelling may be misread as mega
  expect_reject("1 mb", Dimension::kBytes, "unknown unit");
  expect_reject("1 mB", Dimension::kBytes, "unknown unit");
}

TEST_CASE("units: bandwidth") {
  expect_value("900 GB/s", Dimension::kBandwidth, 9e11);
  expect_value("400 Gb/s", Dimension::kBandwidth, 5e10);
  expect_value("400 Gbps", Dimension::kBandwidth, 5e10);
  expect_value("400 Gbit/s", Dimension::kBandwidth, 5e10);
  expect_value("1.6 TB/s", Dimension::kBandwidth, 1.6e12);
  expect_value("25 GiB/s", Dimension::kBandwidth, 25 * kKi * kKi * kKi);
  expect_value("64 GBps", Dimension::kBandwidth, 64e9);
  expect_value("10 Bps", Dimension::kBandwidth, 10);
  expect_value("8 bps", Dimension::kBandwidth, 1);
  expect_value("8 Kbps", Dimension::kBandwidth, 1e3);
  expect_value("8 kbps", Dimension::kBandwidth, 1e3);
  expect_value("8 Mbps", Dimension::kBandwidth, 1e6);
  expect_value("8 Tbps", Dimension::kBandwidth, 1e12);
  expect_value("8 Gib/s", Dimension::kBandwidth, kKi * kKi * kKi);
  expect_value("1 B/s", Dimension::kBandwidth, 1);
  expect_value("1 kB/s", Dimension::kBandwidth, 1e3);
  expect_value("1 MB/s", Dimension::kBandwidth, 1e6);
  expect_value("1 PB/s", Dimension::kBandwidth, 1e15);
  expect_value("1 KiB/s", Dimension::kBandwidth, kKi);
  expect_reject("32 GT/s", Dimension::kBandwidth, "transfer rate");
}

TEST_CASE("units: time") {
  expect_value("2 s", Dimension::kTime, 2);
  expect_value("5 ms", Dimension::kTime, 5e-3);
  expect_value("1.5 us", Dimension::kTime, 1.5e-6);
  expect_value("1.5 \xC2\xB5s", Dimension::kTime, 1.5e-6);  // micro sign
  expect_value("1.5 \xCE\xBCs", Dimension::kTime, 1.5e-6);  // Greek mu
  expect_value("700 ns", Dimension::kTime, 700e-9);
  expect_value("3 ps", Dimension::kTime, 3e-12);
  expect_value("2 min", Dimension::kTime, 120);
  expect_value("1.5 h", Dimension::kTime, 5400);
  expect_value("54 d", Dimension::kTime, 54 * 86400.0);  // days: reliability horizons
}

TEST_CASE("units: power, flop rate, frequency, energy") {
  expect_value("700 W", Dimension::kPower, 700);
  expect_value("1.2 kW", Dimension::kPower, 1200);
  expect_value("20 MW", Dimension::kPower, 2e7);
  expect_value("5 mW", Dimension::kPower, 5e-3);

  expect_value("312 TFLOP/s", Dimension::kFlopRate, 312e12);
  expect_value("1.979 PFLOP/s", Dimension::kFlopRate, 1.979e15);
  expect_value("989 TFLOPS", Dimension::kFlopRate, 989e12);
  expect_value("19.5 Tflop/s", Dimension::kFlopRate, 19.5e12);
  expect_value("1 FLOP/s", Dimension::kFlopRate, 1);
  expect_value("1 kFLOP/s", Dimension::kFlopRate, 1e3);
  expect_value("1 MFLOP/s", Dimension::kFlopRate, 1e6);
  expect_value("1 GFLOP/s", Dimension::kFlopRate, 1e9);
  expect_value("1 EFLOP/s", Dimension::kFlopRate, 1e18);
  expect_value("1EFLOP/s", Dimension::kFlopRate, 1e18);  // the E is a prefix, not an exponent
  expect_value("624 TOP/s", Dimension::kFlopRate, 624e12);
  expect_value("624 TOPS", Dimension::kFlopRate, 624e12);
  expect_reject("19.5 tflop/s", Dimension::kFlopRate, "unknown unit");

  expect_value("50 Hz", Dimension::kFrequency, 50);
  expect_value("10 kHz", Dimension::kFrequency, 1e4);
  expect_value("1410 MHz", Dimension::kFrequency, 1.41e9);
  expect_value("1.98 GHz", Dimension::kFrequency, 1.98e9);

  expect_value("5 J", Dimension::kEnergy, 5);
  expect_value("2 kJ", Dimension::kEnergy, 2e3);
  expect_value("3.6 MJ", Dimension::kEnergy, 3.6e6);
  expect_value("1 Wh", Dimension::kEnergy, 3600);
  expect_value("1 kWh", Dimension::kEnergy, 3.6e6);
  expect_value("1 MWh", Dimension::kEnergy, 3.6e9);
}

TEST_CASE("units: numbers") {
  expect_value("42", Dimension::kNone, 42);
  expect_value("1e9", Dimension::kBandwidth, 1e9);  // bare numbers are SI
  expect_value("0.5", Dimension::kTime, 0.5);
  expect_value("1e9 B/s", Dimension::kBandwidth, 1e9);
  expect_value("2.5E-6 s", Dimension::kTime, 2.5e-6);
  expect_value("1e9B/s", Dimension::kBandwidth, 1e9);
  expect_value("80GiB", Dimension::kBytes, 80 * kKi * kKi * kKi);
  expect_value("  900   GB/s  ", Dimension::kBandwidth, 9e11);
  expect_value("900\tGB/s", Dimension::kBandwidth, 9e11);
  expect_value(".5 s", Dimension::kTime, 0.5);
  expect_value("+3 W", Dimension::kPower, 3);
  expect_value("-5 W", Dimension::kPower, -5);  // callers reject negatives where impossible
  expect_value("0 B", Dimension::kBytes, 0);
  // no out-parameter for the reason is fine
  CHECK(parse("bogus", Dimension::kTime) == std::nullopt);
}

TEST_CASE("units: rejections") {
  expect_reject("", Dimension::kBytes, "empty");
  expect_reject("   ", Dimension::kBytes, "empty");
  expect_reject("GB", Dimension::kBytes, "does not start with a number");
  expect_reject("abc", Dimension::kTime, "does not start with a number");
  expect_reject("--5 s", Dimension::kTime, "does not start with a number");
  expect_reject("+-5 s", Dimension::kTime, "does not start with a number");
  expect_reject("nan", Dimension::kNone, "not a finite number");
  expect_reject("NaN s", Dimension::kTime, "not a finite number");
  expect_reject("inf GB/s", Dimension::kBandwidth, "not a finite number");
  expect_reject("-infinity", Dimension::kNone, "not a finite number");
  expect_reject("1e999 s", Dimension::kTime, "out of range");
  expect_reject("1e308 PB", Dimension::kBytes, "out of range");
  expect_reject("900 GB/s x", Dimension::kBandwidth, "unknown unit \"GB/s x\"");
  expect_reject("12 34", Dimension::kNone, "unexpected unit");
  expect_reject("5 GB", Dimension::kNone, "is a size");
  expect_reject("5 furlongs", Dimension::kTime, "unknown unit");
  expect_reject("1,000 GB", Dimension::kBytes, "unknown unit");
  expect_reject("0x10 B", Dimension::kBytes, "unknown unit");
}

TEST_CASE("units: a unit of another dimension is named in the reason") {
  std::string why;
  CHECK_FALSE(parse("900 GB", Dimension::kBandwidth, &why));
  CHECK(why == "\"GB\" is a size, expected a bandwidth such as \"900 GB/s\"");
  expect_reject("900 GB/s", Dimension::kBytes, "\"GB/s\" is a bandwidth, expected a size");
  expect_reject("400 Gbps", Dimension::kBytes, "is a bandwidth");
  expect_reject("3 ps", Dimension::kBandwidth, "is a time");
  expect_reject("1 s", Dimension::kPower, "is a time");
  expect_reject("700 W", Dimension::kEnergy, "is a power");
  expect_reject("1 kWh", Dimension::kPower, "is an energy");
  expect_reject("2 GHz", Dimension::kTime, "is a frequency");
  expect_reject("312 TFLOP/s", Dimension::kBandwidth, "is a compute rate");
  expect_reject("1 MB/s", Dimension::kFlopRate, "is a bandwidth");
}

TEST_CASE("units: names") {
  using exasim::units::dimension_name;
  using exasim::units::example;
  using exasim::units::si_unit;
  CHECK(dimension_name(Dimension::kBytes) == "bytes");
  CHECK(dimension_name(Dimension::kBandwidth) == "bandwidth");
  CHECK(si_unit(Dimension::kBandwidth) == "B/s");
  CHECK(si_unit(Dimension::kFlopRate) == "FLOP/s");
  CHECK(si_unit(Dimension::kNone).empty());
  // every example parses in its own dimension
  for (Dimension d : {Dimension::kNone, Dimension::kBytes, Dimension::kBandwidth, Dimension::kTime,
                      Dimension::kPower, Dimension::kFlopRate, Dimension::kFrequency, Dimension::kEnergy}) {
    INFO(std::string(dimension_name(d)));
    CHECK(parse(example(d), d).has_value());
  }
}

TEST_CASE("units: format") {
  CHECK(format(9e11, Dimension::kBandwidth) == "900 GB/s");
  CHECK(format(5e10, Dimension::kBandwidth) == "50 GB/s");
  CHECK(format(1.6e12, Dimension::kBandwidth) == "1.6 TB/s");
  CHECK(format(0, Dimension::kBandwidth) == "0 B/s");
  CHECK(format(85899345920.0, Dimension::kBytes) == "80 GiB");
  CHECK(format(1536, Dimension::kBytes) == "1.5 KiB");
  CHECK(format(512, Dimension::kBytes) == "512 B");
  CHECK(format(141e9, Dimension::kBytes) == "131.3 GiB");
  CHECK(format(1.5e-6, Dimension::kTime) == "1.5 us");
  CHECK(format(2.5e-3, Dimension::kTime) == "2.5 ms");
  CHECK(format(3e-12, Dimension::kTime) == "3 ps");
  CHECK(format(12.5, Dimension::kTime) == "12.5 s");
  CHECK(format(3600, Dimension::kTime) == "3600 s");
  CHECK(format(312e12, Dimension::kFlopRate) == "312 TFLOP/s");
  CHECK(format(1.979e15, Dimension::kFlopRate) == "1.979 PFLOP/s");
  CHECK(format(700, Dimension::kPower) == "700 W");
  CHECK(format(0.005, Dimension::kPower) == "5 mW");
  CHECK(format(1.98e9, Dimension::kFrequency) == "1.98 GHz");
  CHECK(format(3.6e6, Dimension::kEnergy) == "3.6 MJ");
  CHECK(format(42, Dimension::kNone) == "42");
  CHECK(format(-700, Dimension::kPower) == "-700 W");
  CHECK(format(1.23456e9, Dimension::kFrequency) == "1.235 GHz");
  CHECK(format(1.23456e9, Dimension::kFrequency, 2) == "1.2 GHz");
  CHECK(format(1.23456e9, Dimension::kFrequency, 6) == "1.23456 GHz");
  CHECK(format(999.96e9, Dimension::kBandwidth) == "1 TB/s");  // rounding moves up a prefix
  CHECK(format(1048575, Dimension::kBytes) == "1 MiB");
  CHECK(format(0.25, Dimension::kBytes) == "0.25 B");
}

TEST_CASE("units: format then parse round-trips") {
  const std::array<std::pair<Dimension, double>, 8> bases = {{
      {Dimension::kNone, 1.0},
      {Dimension::kBytes, 1.0},
      {Dimension::kBandwidth, 1.0},
      {Dimension::kTime, 1e-13},
      {Dimension::kPower, 1e-4},
      {Dimension::kFlopRate, 1.0},
      {Dimension::kFrequency, 1.0},
      {Dimension::kEnergy, 1.0},
  }};
  for (const auto& [d, start] : bases) {
    // values spanning every prefix and beyond, with awkward mantissas
    for (double v = start * 0.37; v < 1e22; v *= 7.31) {
      const std::string text = format(v, d);
      std::string why;
      const auto back = parse(text, d, &why);
      INFO("dimension ", std::string(exasim::units::dimension_name(d)), " value ", v, " text ", text,
           " why ", why);
      REQUIRE(back.has_value());
      CHECK(std::fabs(*back - v) <= 1e-3 * v);
    }
  }
}
