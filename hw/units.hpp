#pragma once
// Quantities with units, parsed once at the edge into SI doubles.
// "900 GB/s" -> 9e11 B/s, "400 Gb/s" -> 5e10 B/s, "80 GiB" -> 85899345920 B, "1.5 us" -> 1.5e-6 s.
#include <optional>
#include <string>
#include <string_view>

namespace exasim::units {

// What a quantity measures; the SI unit it is stored in is given after each.
enum class Dimension {
  kNone,            // plain number (no unit allowed except none)
  kBytes,           // B      accepts B, kB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB, b/kb/Mb/Gb/Tb (bits)
  kBandwidth,       // B/s    accepts <bytes unit>/s, <bits unit>/s, Gbps/Mbps/Tbps, GT/s is rejected
  kTime,            // s      accepts s, ms, us, µs, ns, ps, min, h, d
  kPower,           // W      accepts W, kW, MW, mW
  kFlopRate,        // FLOP/s accepts FLOP/s, FLOPS, kFLOP/s, MFLOP/s, GFLOP/s, TFLOP/s, PFLOP/s, TOP/s (int ops) ...
  kFrequency,       // Hz     accepts Hz, kHz, MHz, GHz
  kEnergy,          // J      accepts J, kJ, MJ, Wh, kWh
};

std::string_view dimension_name(Dimension d);  // "bytes", "bandwidth", ...
std::string_view si_unit(Dimension d);         // "B", "B/s", "s", "W", "FLOP/s", "Hz", "J"
std::string_view example(Dimension d);         // "80 GiB", "900 GB/s", ...

// Parses "<number> <unit>" (space optional). A bare number is taken as SI.
// Returns nullopt with a reason in *why when the text does not parse or the unit
// belongs to another dimension.
std::optional<double> parse(std::string_view text, Dimension d, std::string* why = nullptr);

// Formats an SI value with a readable prefix, e.g. format(9e11, kBandwidth) -> "900 GB/s",
// format(85899345920, kBytes) -> "80 GiB" (binary prefixes for bytes), 1.5e-6 s -> "1.5 us".
std::string format(double si_value, Dimension d, int significant = 4);

}  // namespace exasim::units
