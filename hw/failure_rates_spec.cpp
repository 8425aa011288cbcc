#include "hw/failure_rates_spec.hpp"

#include <array>

#include "hw/config/fields.hpp"

namespace exasim::hw {
namespace {
using config::Node;

// A rate per device-hour: a device interrupting a job more than once in 100 hours is broken, not a
// failure rate (Llama 3's fleet: about once in 100,000 GPU-hours).
double rate(const Node& n) {
  const double v = n.as_number();
  if (!(v >= 0)) n.fail("a failure rate cannot be negative", "interruptions per device-hour, e.g. 9.2e-6");
  if (v > 1e-2) n.fail("more than one interruption per 100 device-hours is not a plausible rate", "interruptions per device-hour, e.g. 9.2e-6");
  return v;
}

template <double FailureRatesSpec::*member>
void set_rate(FailureRatesSpec& s, const Node& n) {
  s.*member = rate(n);
}

const std::array<config::Field<FailureRatesSpec>, 8> kFields = {{
    {"gpu", set_rate<&FailureRatesSpec::gpu>, false},
    {"hbm", set_rate<&FailureRatesSpec::hbm>, false},
    {"software", set_rate<&FailureRatesSpec::software>, false},
    {"nvlink", set_rate<&FailureRatesSpec::nvlink>, false},
    {"host", set_rate<&FailureRatesSpec::host>, false},
    {"nic", set_rate<&FailureRatesSpec::nic>, false},
    {"network", set_rate<&FailureRatesSpec::network>, false},
    {"source", [](FailureRatesSpec& s, const Node& n) { s.source = n.as_string(); }, false},
}};
}  // namespace

FailureRatesSpec failure_rates_from_layers(const std::string& name, const std::vector<config::Node>& layers) {
  FailureRatesSpec s = config::build_from_layers<FailureRatesSpec>(kFields, layers);
  s.name = name;
  return s;
}

}  // namespace exasim::hw
