#include "hw/units.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <system_error>

namespace exasim::units {
namespace {

// A unit is spelled <prefix><base>; its factor to SI is prefix.factor * base.factor.
struct Term {
  std::string_view text;
  double factor;
};

constexpr double kKi = 1024.0;
constexpr double kMi = kKi * 1024.0;
constexpr double kGi = kMi * 1024.0;
constexpr double kTi = kGi * 1024.0;
constexpr double kPi = kTi * 1024.0;

// Bytes and bits: kilo may be written k or K (both are common on data sheets); binary
// prefixes are IEC. Milli makes no sense for bytes, so "mb"/"mB" are rejected, not misread.
constexpr std::array kBytePrefixes = {
    Term{"", 1.0},    Term{"k", 1e3},   Term{"K", 1e3},   Term{"M", 1e6},   Term{"G", 1e9},
    Term{"T", 1e12},  Term{"P", 1e15},  Term{"Ki", kKi},  Term{"Mi", kMi},  Term{"Gi", kGi},
    Term{"Ti", kTi},  Term{"Pi", kPi},
};
constexpr std::array kByteBases = {Term{"B", 1.0}, Term{"b", 0.125}, Term{"bit", 0.125}};

constexpr std::array kTimeUnits = {
    Term{"s", 1.0},      Term{"ms", 1e-3},          Term{"us", 1e-6},         Term{"\xC2\xB5s", 1e-6},
    Term{"\xCE\xBCs", 1e-6},  // Greek mu, which some keyboards produce instead of the micro sign
    Term{"ns", 1e-9},    Term{"ps", 1e-12},         Term{"min", 60.0},        Term{"h", 3600.0},
    Term{"d", 86400.0},  // days: reliability horizons, time to train
};

constexpr std::array kPowerPrefixes = {Term{"m", 1e-3}, Term{"", 1.0}, Term{"k", 1e3}, Term{"M", 1e6},
                                       Term{"G", 1e9}};
constexpr std::array kPowerBases = {Term{"W", 1.0}};
constexpr std::array kRatePrefixes = {Term{"", 1.0},   Term{"k", 1e3},   Term{"M", 1e6},  Term{"G", 1e9},
                                      Term{"T", 1e12}, Term{"P", 1e15}, Term{"E", 1e18}};
// Integer ops (TOP/s) share the dimension: a rate of arithmetic operations.
constexpr std::array kRateBases = {Term{"FLOP/s", 1.0}, Term{"FLOPS", 1.0}, Term{"flop/s", 1.0},
                                   Term{"OP/s", 1.0},   Term{"OPS", 1.0}};
constexpr std::array kFrequencyPrefixes = {Term{"", 1.0}, Term{"k", 1e3}, Term{"M", 1e6}, Term{"G", 1e9}};
constexpr std::array kFrequencyBases = {Term{"Hz", 1.0}};
constexpr std::array kEnergyPrefixes = {Term{"", 1.0}, Term{"k", 1e3}, Term{"M", 1e6}, Term{"G", 1e9}};
constexpr std::array kEnergyBases = {Term{"J", 1.0}, Term{"Wh", 3600.0}};

constexpr std::array kAllDimensions = {Dimension::kNone,  Dimension::kBytes,     Dimension::kBandwidth,
                                       Dimension::kTime,  Dimension::kPower,     Dimension::kFlopRate,
                                       Dimension::kFrequency, Dimension::kEnergy};

std::optional<double> lookup(std::string_view unit, std::span<const Term> terms) {
  for (const Term& t : terms)
    if (t.text == unit) return t.factor;
  return std::nullopt;
}

std::optional<double> prefixed(std::string_view unit, std::span<const Term> prefixes,
                               std::span<const Term> bases) {
  for (const Term& p : prefixes) {
    if (!unit.starts_with(p.text)) continue;
    if (auto base = lookup(unit.substr(p.text.size()), bases)) return p.factor * *base;
  }
  return std::nullopt;
}

std::optional<double> bytes_factor(std::string_view unit) {
  return prefixed(unit, kBytePrefixes, kByteBases);
}

// "<bytes or bits>/s", and the networking spellings "Gbps" (bits) and "GBps" (bytes).
std::optional<double> bandwidth_factor(std::string_view unit) {
  for (std::string_view per_second : {std::string_view("/s"), std::string_view("ps")}) {
    if (unit.size() > per_second.size() && unit.ends_with(per_second))
      return bytes_factor(unit.substr(0, unit.size() - per_second.size()));
  }
  return std::nullopt;
}

// Factor from `unit` to the SI unit of `d`; nullopt when `unit` is not a unit of `d`.
// An empty unit is a bare number, which is SI in every dimension.
std::optional<double> unit_factor(std::string_view unit, Dimension d) {
  if (unit.empty()) return 1.0;
  switch (d) {
    case Dimension::kNone: return std::nullopt;
    case Dimension::kBytes: return bytes_factor(unit);
    case Dimension::kBandwidth: return bandwidth_factor(unit);
    case Dimension::kTime: return lookup(unit, kTimeUnits);
    case Dimension::kPower: return prefixed(unit, kPowerPrefixes, kPowerBases);
    case Dimension::kFlopRate: return prefixed(unit, kRatePrefixes, kRateBases);
    case Dimension::kFrequency: return prefixed(unit, kFrequencyPrefixes, kFrequencyBases);
    case Dimension::kEnergy: return prefixed(unit, kEnergyPrefixes, kEnergyBases);
  }
  return std::nullopt;
}

// Noun phrase for messages: "a size", "a bandwidth", ...
std::string_view described(Dimension d) {
  switch (d) {
    case Dimension::kNone: return "a plain number";
    case Dimension::kBytes: return "a size";
    case Dimension::kBandwidth: return "a bandwidth";
    case Dimension::kTime: return "a time";
    case Dimension::kPower: return "a power";
    case Dimension::kFlopRate: return "a compute rate";
    case Dimension::kFrequency: return "a frequency";
    case Dimension::kEnergy: return "an energy";
  }
  return "a quantity";
}

std::string expected(Dimension d) {
  return "expected " + std::string(described(d)) + " such as \"" + std::string(example(d)) + "\"";
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

// Why `unit` is not a unit of `d`: it belongs to another dimension, or to none.
std::string unit_problem(std::string_view unit, Dimension d) {
  const std::string quoted = "\"" + std::string(unit) + "\"";
  for (Dimension other : kAllDimensions) {
    if (other != d && other != Dimension::kNone && unit_factor(unit, other))
      return quoted + " is " + std::string(described(other)) + ", " + expected(d);
  }
  if (d == Dimension::kBandwidth && unit.ends_with("T/s"))
    return quoted + " is a transfer rate, not a bandwidth; " + expected(d);
  if (d == Dimension::kNone) return "unexpected unit " + quoted + ", " + expected(d);
  return "unknown unit " + quoted + ", " + expected(d);
}

std::optional<double> fail(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return std::nullopt;
}

struct Scale {
  std::string_view prefix;
  double factor;
};

constexpr std::array kSiScales = {Scale{"p", 1e-12}, Scale{"n", 1e-9}, Scale{"u", 1e-6}, Scale{"m", 1e-3},
                                  Scale{"", 1.0},    Scale{"k", 1e3},  Scale{"M", 1e6},  Scale{"G", 1e9},
                                  Scale{"T", 1e12},  Scale{"P", 1e15}, Scale{"E", 1e18}};
constexpr std::array kBinaryScales = {Scale{"", 1.0}, Scale{"Ki", kKi}, Scale{"Mi", kMi},
                                      Scale{"Gi", kGi}, Scale{"Ti", kTi}, Scale{"Pi", kPi}};

// The scales format() may use for `d`, smallest first, and the base unit written after the prefix.
std::span<const Scale> scales_for(Dimension d) {
  const std::span<const Scale> si(kSiScales);
  switch (d) {
    case Dimension::kBytes: return kBinaryScales;
    case Dimension::kBandwidth: return si.subspan(4, 6);  // B/s .. PB/s
    case Dimension::kTime: return si.subspan(0, 5);       // ps .. s
    case Dimension::kPower: return si.subspan(3, 5);      // mW .. GW
    case Dimension::kFlopRate: return si.subspan(4, 7);   // FLOP/s .. EFLOP/s
    case Dimension::kFrequency: return si.subspan(4, 4);  // Hz .. GHz
    case Dimension::kEnergy: return si.subspan(4, 4);     // J .. GJ
    case Dimension::kNone: break;
  }
  return si.subspan(4, 1);
}

// `magnitude` (>= 0) printed with `significant` digits, trailing zeros trimmed.
std::string digits(double magnitude, int significant) {
  char buf[64];
  if (magnitude == 0.0) return "0";
  const int before_point = static_cast<int>(std::floor(std::log10(magnitude))) + 1;
  const int decimals = std::max(0, significant - before_point);
  if (before_point < -2 || before_point > 7) {  // past every prefix: scientific reads better
    std::snprintf(buf, sizeof buf, "%.*g", significant, magnitude);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.*f", decimals, magnitude);
  std::string out = buf;
  if (out.find('.') != std::string::npos) {
    out.erase(out.find_last_not_of('0') + 1);
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

}  // namespace

std::string_view dimension_name(Dimension d) {
  switch (d) {
    case Dimension::kNone: return "number";
    case Dimension::kBytes: return "bytes";
    case Dimension::kBandwidth: return "bandwidth";
    case Dimension::kTime: return "time";
    case Dimension::kPower: return "power";
    case Dimension::kFlopRate: return "flop rate";
    case Dimension::kFrequency: return "frequency";
    case Dimension::kEnergy: return "energy";
  }
  return "unknown";
}

std::string_view si_unit(Dimension d) {
  switch (d) {
    case Dimension::kNone: return "";
    case Dimension::kBytes: return "B";
    case Dimension::kBandwidth: return "B/s";
    case Dimension::kTime: return "s";
    case Dimension::kPower: return "W";
    case Dimension::kFlopRate: return "FLOP/s";
    case Dimension::kFrequency: return "Hz";
    case Dimension::kEnergy: return "J";
  }
  return "";
}

std::string_view example(Dimension d) {
  switch (d) {
    case Dimension::kNone: return "42";
    case Dimension::kBytes: return "80 GiB";
    case Dimension::kBandwidth: return "900 GB/s";
    case Dimension::kTime: return "1.5 us";
    case Dimension::kPower: return "700 W";
    case Dimension::kFlopRate: return "989 TFLOP/s";
    case Dimension::kFrequency: return "1.98 GHz";
    case Dimension::kEnergy: return "3.6 MJ";
  }
  return "";
}

std::optional<double> parse(std::string_view text, Dimension d, std::string* why) {
  const std::string_view s = trim(text);
  if (s.empty()) return fail(why, "empty value, " + expected(d));
  // from_chars takes no '+'; accept one, but not "+-5".
  const std::size_t start = s.front() == '+' && s.size() > 1 && s[1] != '-' && s[1] != '+' ? 1 : 0;
  double number = 0.0;
  const auto [end, ec] = std::from_chars(s.data() + start, s.data() + s.size(), number);
  const std::string quoted = "\"" + std::string(s) + "\"";
  if (ec == std::errc::result_out_of_range) return fail(why, quoted + " is out of range");
  if (ec != std::errc{}) return fail(why, quoted + " does not start with a number, " + expected(d));
  if (!std::isfinite(number)) return fail(why, quoted + " is not a finite number, " + expected(d));

  const std::string_view unit = trim(s.substr(static_cast<std::size_t>(end - s.data())));
  const auto factor = unit_factor(unit, d);
  if (!factor) return fail(why, unit_problem(unit, d));
  const double value = number * *factor;
  if (!std::isfinite(value)) return fail(why, quoted + " is out of range");
  return value;
}

std::string format(double si_value, Dimension d, int significant) {
  significant = std::max(1, significant);
  const std::string unit(si_unit(d));
  const std::string sign = si_value < 0 ? "-" : "";
  const double magnitude = std::fabs(si_value);
  if (!std::isfinite(si_value)) return std::to_string(si_value) + (unit.empty() ? "" : " " + unit);
  const auto scales = scales_for(d);
  const double base = d == Dimension::kBytes ? kKi : 1e3;
  // Largest scale that keeps the number >= 1; moving up when rounding reaches the next scale
  // ("999.96 GB/s" prints as "1 TB/s", not "1000 GB/s").
  std::size_t i = 0;
  while (i + 1 < scales.size() && magnitude >= scales[i + 1].factor) ++i;
  std::string text = digits(magnitude / scales[i].factor, significant);
  if (i + 1 < scales.size() && std::strtod(text.c_str(), nullptr) >= base)
    text = digits(magnitude / scales[++i].factor, significant);
  const std::string suffix = std::string(scales[i].prefix) + unit;
  return sign + text + (suffix.empty() ? "" : " " + suffix);
}

}  // namespace exasim::units
