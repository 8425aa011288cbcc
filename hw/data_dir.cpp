#include "hw/data_dir.hpp"

#include <cstdlib>
#include <filesystem>

namespace exasim::hw {

std::string default_data_dir() {
  if (const char* data = std::getenv("EXASIM_DATA"); data && *data) return data;
  return (std::filesystem::path(EXASIM_SOURCE_DIR).parent_path() / "shared" / "data").string();
}

}  // namespace exasim::hw
