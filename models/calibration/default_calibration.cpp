#include "models/calibration/default_calibration.hpp"

#include <filesystem>

#include "hw/config/node.hpp"
#include "hw/error.hpp"

namespace exasim::models {

std::string default_calibration(const std::string& configs_dir, CalibrationFor kind, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(configs_dir) / "calibration";
  const fs::path index = folder / "defaults.yaml";
  if (!fs::exists(index)) return {};
  const config::Node root = config::load_file(index.string());
  root.expect_map();
  root.check_keys({"gpus", "nodes"});
  const config::Node section = root[kind == CalibrationFor::kGpu ? "gpus" : "nodes"];
  if (!section.defined() || !section.has(name)) return {};
  const config::Node entry = section[name];
  const fs::path file = folder / entry.as_string();
  if (!fs::exists(file))
    entry.fail("calibration file not found: " + file.string(), "name a file in configs/calibration/, or drop the entry");
  return file.string();
}

std::string calibration_file_for(const std::string& flag, const std::string& configs_dir, CalibrationFor kind,
                                 const std::string& name) {
  if (flag == "none") return {};
  const std::string file = flag.empty() ? default_calibration(configs_dir, kind, name) : flag;
  if (!file.empty() && !std::filesystem::exists(file))
    throw IoError("calibration file not found", {file, 0, "--calibration"}, "give the path of a calibration YAML, or none");
  return file;
}

}  // namespace exasim::models
