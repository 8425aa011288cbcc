#include <iomanip>
#include <ostream>
#include <sstream>

#include "hw/bench/suite.hpp"
#include "hw/units.hpp"

namespace exasim::bench {

namespace {

using units::Dimension;

std::string shape_text(const hw::Measurement& m) {
  std::ostringstream s;
  if (m.shape.count("m")) {
    s << m.shape.at("m") << "x" << m.shape.at("n") << "x" << m.shape.at("k");
    if (m.shape.count("batch") && m.shape.at("batch") > 1) s << " b" << m.shape.at("batch");
  } else if (m.shape.count("ranks")) {
    s << m.shape.at("ranks") << " ranks " << units::format(m.bytes, Dimension::kBytes, 3);
  } else if (m.working_set_bytes > 0) {
    s << units::format(m.working_set_bytes, Dimension::kBytes, 3);
  } else if (m.bytes > 0) {
    s << units::format(m.bytes, Dimension::kBytes, 3);
  }
  return s.str();
}

// The rate that matters for the suite, from the minimum time.
std::string rate_text(const hw::Measurement& m) {
  const double t = m.time_s.min;
  if (m.suite == "latency") return units::format(t, Dimension::kTime, 3) + "/access";
  if (m.flops > 0) return units::format(m.flops / t, Dimension::kFlopRate, 3);
  if (m.bytes > 0) return units::format(m.bytes / t, Dimension::kBandwidth, 3);
  return units::format(t, Dimension::kTime, 3);
}

}  // namespace

void Recorder::add(const hw::Measurement& m) {
  profile.measurements.push_back(m);
  std::ostringstream line;
  line << std::left << std::setw(8) << m.suite << std::setw(14) << m.op << std::setw(6) << m.dtype << "dev "
       << m.device << "  threads " << std::setw(3) << m.threads << std::setw(18) << shape_text(m) << " min "
       << std::setw(10) << units::format(m.time_s.min, Dimension::kTime, 3) << " median " << std::setw(10)
       << units::format(m.time_s.median, Dimension::kTime, 3) << "  " << rate_text(m) << "\n";
  log << line.str() << std::flush;
}

}  // namespace exasim::bench
