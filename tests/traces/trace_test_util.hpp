#pragma once
// Helpers shared by the trace and request-source tests.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "hw/error.hpp"
#include "workloads/serving/request.hpp"

namespace exasim::test {

inline std::string trace_data(const std::string& name) { return std::string(EXASIM_TEST_DATA) + "/traces/" + name; }

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Runs `f`, expects an error of type E, and returns it so the caller can check file, line, key.
template <class E, class F>
E expect_error(F&& f) {
  try {
    f();
  } catch (const E& e) {
    INFO("error: ", e.describe());
    return e;
  }
  FAIL("expected an exception");
  return E("unreachable");
}

// Every request of `source`, in order.
inline std::vector<workloads::serving::Request> drain(workloads::serving::RequestSource& source) {
  std::vector<workloads::serving::Request> out;
  while (auto r = source.next()) out.push_back(std::move(*r));
  return out;
}

// Reads the whole source and reports the error a malformed row raises.
template <class Source>
ConfigError row_error(Source& source) {
  return expect_error<ConfigError>([&] { drain(source); });
}

}  // namespace exasim::test
