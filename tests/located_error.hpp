#pragma once
// What a reader refuses a bad input with: the line and "key: what (hint)" of the ConfigError
// that `read()` throws, {-1, ""} when it throws none. The table readers' tests compare both.
#include <string>
#include <utility>

#include "hw/error.hpp"

namespace exasim::testing {

template <class Read>
std::pair<int, std::string> located_error(Read&& read) {
  try {
    read();
  } catch (const ConfigError& e) {
    return {e.where().line, e.where().key + ": " + e.what() + " (" + e.hint() + ")"};
  }
  return {-1, ""};
}

}  // namespace exasim::testing
