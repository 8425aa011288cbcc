#pragma once
// What any real part has: a range of values per catalog kind and key (configs/hw/plausible.yaml,
// each range with its reason). A GPU, link, fabric, NIC or storage system whose value lies outside
// is refused at the place that set it (the catalog, a scenario, --set), naming the value read and
// its unit: a bare number is SI, so `hbm_bandwidth: 4000` is 4 kB/s, and the hint says which unit
// would make it plausible ("write the unit: 4000 GB/s").
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hw/config/node.hpp"
#include "hw/units.hpp"

namespace exasim::hw {

class PlausibleRanges {
 public:
  // Reads `path`; no ranges when the file does not exist. Throws ConfigError for a malformed one.
  static PlausibleRanges load(const std::string& path);

  // Checks the keys of one component's layers (catalog chain first, overrides last) against the
  // ranges of `kind` ("gpu", "link", ...); a map-valued key (a GPU's peak rates by dtype) has each
  // of its values checked. Throws ConfigError at the last layer that set an implausible value;
  // `what` names the component in the message ("GPU").
  void check(const std::string& kind, std::string_view what, const std::vector<config::Node>& layers) const;

  std::size_t size() const;  // ranges known, over all kinds

 private:
  struct Range {
    units::Dimension dimension = units::Dimension::kNone;
    double lo = 0, hi = 0;
    std::string lo_text, hi_text;
  };
  void check_value(const config::Node& value, const Range& r, std::string_view what) const;

  std::string file_;
  std::map<std::string, std::map<std::string, Range>> ranges_;
};

}  // namespace exasim::hw
