#include "hw/plausible_ranges.hpp"

#include <array>
#include <filesystem>
#include <optional>

#include "hw/error.hpp"

namespace exasim::hw {

namespace {

using units::Dimension;

constexpr std::array kDimensions = {Dimension::kBytes, Dimension::kBandwidth, Dimension::kTime, Dimension::kPower,
                                    Dimension::kFlopRate, Dimension::kFrequency, Dimension::kEnergy};

// A bound as written ("100 GB/s"): its value and the dimension its unit belongs to. A bound
// without a unit is refused: the unit says what the range is of.
std::pair<double, Dimension> read_bound(const config::Node& n) {
  const std::string text = n.as_string();
  if (!units::parse(text, Dimension::kNone))  // a bare number parses in every dimension
    for (Dimension d : kDimensions)
      if (const auto v = units::parse(text, d)) return {*v, d};
  n.fail("a plausible range is written with its unit", "e.g. [10 GB/s, 100 TB/s]");
}

// The SI prefixes a bare number most likely left out: multiples for the dimensions stored in
// their base unit, fractions for time (latencies are written in ns or us).
struct Prefix {
  const char* text;
  double scale;
};
constexpr std::array kUp = {Prefix{"k", 1e3}, Prefix{"M", 1e6}, Prefix{"G", 1e9}, Prefix{"T", 1e12}, Prefix{"P", 1e15}};
constexpr std::array kDown = {Prefix{"m", 1e-3}, Prefix{"u", 1e-6}, Prefix{"n", 1e-9}};

}  // namespace

PlausibleRanges PlausibleRanges::load(const std::string& path) {
  PlausibleRanges p;
  p.file_ = path;
  if (!std::filesystem::exists(path)) return p;
  const config::Node root = config::load_file(path);
  if (!root.defined()) return p;
  root.expect_map();
  for (const std::string& kind : root.keys()) {
    const config::Node keys = root[kind];
    keys.expect_map();
    for (const std::string& key : keys.keys()) {
      const config::Node r = keys[key];
      if (!r.is_sequence() || r.size() != 2) r.fail("a plausible range is [lowest, highest]", "e.g. [10 GB/s, 100 TB/s]");
      const auto [lo, dim] = read_bound(r.at(0));
      const auto [hi, hi_dim] = read_bound(r.at(1));
      if (hi_dim != dim) r.at(1).fail("the bounds of a range measure different things", "write both in units of one kind");
      if (!(lo <= hi)) r.fail("the lowest bound is above the highest");
      p.ranges_[kind][key] = {dim, lo, hi, r.at(0).as_string(), r.at(1).as_string()};
    }
  }
  return p;
}

std::size_t PlausibleRanges::size() const {
  std::size_t n = 0;
  for (const auto& [kind, keys] : ranges_) n += keys.size();
  return n;
}

void PlausibleRanges::check_value(const config::Node& value, const Range& r, std::string_view what) const {
  const double v = value.as_quantity(r.dimension);
  if (v >= r.lo && v <= r.hi) return;
  const std::string text = value.as_string();
  const std::string read = units::format(v, r.dimension);
  std::string hint = "check the value and its unit";
  if (v > 0 && units::parse(text, Dimension::kNone)) {  // a bare number, taken as SI: which unit was meant?
    std::optional<Prefix> fits;
    int fitting = 0;
    const auto try_prefixes = [&](const auto& prefixes) {
      for (const Prefix& p : prefixes)
        if (v * p.scale >= r.lo && v * p.scale <= r.hi) {
          fits = p;
          ++fitting;
        }
    };
    if (r.dimension == Dimension::kTime) try_prefixes(kDown);
    else try_prefixes(kUp);
    hint = fitting == 1 ? "a bare number is SI; write the unit: " + text + " " + fits->text + std::string(units::si_unit(r.dimension))
                        : "a bare number is SI; write the unit, e.g. " + std::string(units::example(r.dimension));
  }
  value.fail(text + " reads as " + read + ", outside what a real " + std::string(what) + " has (" + r.lo_text + " to " + r.hi_text +
                 ", " + std::filesystem::path(file_).filename().string() + ")",
             hint);
}

void PlausibleRanges::check(const std::string& kind, std::string_view what, const std::vector<config::Node>& layers) const {
  const auto it = ranges_.find(kind);
  if (it == ranges_.end()) return;
  for (const auto& [key, range] : it->second) {
    // The last layer that sets the key decides its value (build_from_layers).
    for (auto layer = layers.rbegin(); layer != layers.rend(); ++layer) {
      if (!layer->has(key)) continue;
      const config::Node value = (*layer)[key];
      if (value.is_map()) {
        for (const std::string& sub : value.keys()) check_value(value[sub], range, what);
      } else {
        check_value(value, range, what);
      }
      break;
    }
  }
}

}  // namespace exasim::hw
