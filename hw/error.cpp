#include "hw/error.hpp"

namespace exasim {

std::string Error::describe() const {
  std::string out;
  if (!where_.file.empty()) {
    out += where_.file;
    if (where_.line > 0) out += ":" + std::to_string(where_.line);
    out += ": ";
  }
  if (!where_.key.empty()) out += where_.key + ": ";
  out += what();
  if (!hint_.empty()) out += " (" + hint_ + ")";
  return out;
}

}  // namespace exasim
