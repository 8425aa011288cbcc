#pragma once
// What a reader refuses a bad input with: the line and "key: what (hint)" of the ConfigError
// that `read()` throws, {-1, ""} when it throws none. The table readers' tests compare both.
#include <doctest/doctest.h>

#include <initializer_list>
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

// A table a reader must refuse: its file, the line, and how the located message starts.
struct Refusal {
  const char* file;
  int line;
  const char* message;
};

// Each refusal's file, as `error_of(file)` (a located_error) reports it.
template <class ErrorOf>
void check_refusals(ErrorOf&& error_of, std::initializer_list<Refusal> refusals) {
  for (const Refusal& r : refusals) {
    CAPTURE(r.file);
    const auto e = error_of(r.file);
    CHECK(e.first == r.line);
    CHECK(e.second.starts_with(r.message));
  }
}

}  // namespace exasim::testing
