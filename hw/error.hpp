#pragma once
// Typed errors. Library code throws these; only the CLI turns them into messages and exit codes.
#include <stdexcept>
#include <string>

namespace exasim {

// Where in an input a problem was found. line is 1-based; 0 when unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  std::string key;  // dotted path, e.g. "training.parallelism.tp"
};

// Base of every exasim error: what went wrong, where, and how to fix it.
class Error : public std::runtime_error {
 public:
  Error(std::string what, SourceLocation where = {}, std::string hint = {})
      : std::runtime_error(what), where_(std::move(where)), hint_(std::move(hint)) {}
  const SourceLocation& where() const { return where_; }
  const std::string& hint() const { return hint_; }
  // One line: "<file>:<line>: <key>: <what> (<hint>)"; parts that are unknown are left out.
  std::string describe() const;

 private:
  SourceLocation where_;
  std::string hint_;
};

// Input that does not follow the schema: syntax, unknown key, wrong type, bad value, bad unit.
class ConfigError : public Error {
  using Error::Error;
};

// A plan that cannot run: divisibility, GPU count, memory.
class PlanError : public Error {
  using Error::Error;
};

// A file that cannot be read.
class IoError : public Error {
  using Error::Error;
};

}  // namespace exasim
