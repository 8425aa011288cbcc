#pragma once
// Where the data that scenarios name lives (request traces, length tables): a relative path is
// looked up beside the scenario first, then under this root, so a scenario copied elsewhere still
// finds `traces/AzureLLMInferenceTrace_conv.csv`.
#include <string>

namespace exasim::hw {

// $EXASIM_DATA if set, else the shared data folder beside the source tree (../shared/data).
std::string default_data_dir();

}  // namespace exasim::hw
