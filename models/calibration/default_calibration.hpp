#pragma once
// The calibration each catalog GPU and node runs on by default (configs/calibration/defaults.yaml):
// the files `exasim calibrate` wrote from measured tables, named per GPU (kernel models) and per
// node (collective parameters). A GPU or node the index does not list runs on the datasheet +
// family defaults.
#include <string>

namespace exasim::models {

enum class CalibrationFor { kGpu, kNode };

// The default calibration file of catalog GPU or node `name` under `configs_dir` (its path), or
// "" when the index lists none. Throws ConfigError (file, line, key) on a malformed index: an
// unknown section, a value that is not a file name, a file that does not exist.
std::string default_calibration(const std::string& configs_dir, CalibrationFor kind, const std::string& name);

// What `--calibration VALUE` (or a scenario's key) asks for: "none" for no calibration at all.
inline bool is_no_calibration(const std::string& value) { return value == "none"; }

}  // namespace exasim::models
