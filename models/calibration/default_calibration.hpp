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

// The calibration file `--calibration VALUE` names for catalog GPU or node `name`: VALUE itself,
// none for "none" (datasheet + family defaults), and with no VALUE the index's default (none
// where it lists none; `name` "" asks for no default). "" means no file. Throws IoError when the
// file does not exist.
std::string calibration_file_for(const std::string& flag, const std::string& configs_dir, CalibrationFor kind,
                                 const std::string& name);

}  // namespace exasim::models
