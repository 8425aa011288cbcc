#include "fuzz/fuzz_inputs.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "hw/catalog.hpp"
#include "hw/config/json_text.hpp"
#include "hw/config/node.hpp"
#include "hw/error.hpp"
#include "hw/profile/profile.hpp"
#include "hw/units.hpp"
#include "models/calibration/aic_attention_table.hpp"
#include "models/calibration/aic_gemm_table.hpp"
#include "models/calibration/aic_moe_table.hpp"
#include "models/calibration/aic_nccl_table.hpp"
#include "models/calibration/calibration_file.hpp"
#include "models/calibration/vidur_op_table.hpp"
#include "traces/request_source_factory.hpp"
#include "validate/validation_case.hpp"
#include "workloads/model/hf_config.hpp"
#include "workloads/scenario/scenario.hpp"

namespace exasim::fuzz {

namespace {

const hw::Catalog& catalog() {
  static const hw::Catalog c = hw::Catalog::load(std::string(EXASIM_SOURCE_DIR) + "/configs");
  return c;
}

// Readers that take a path get the input as a file, one per process.
std::string as_file(std::string_view input, const char* suffix) {
  const auto path = std::filesystem::temp_directory_path() / ("exasim_fuzz_" + std::to_string(::getpid()) + suffix);
  std::ofstream(path, std::ios::binary).write(input.data(), static_cast<std::streamsize>(input.size()));
  return path.string();
}

void scenario(std::string_view input) {
  const config::Node root = config::load_string(std::string(input), "fuzz.yaml");
  (void)workloads::scenario_from_node(root, catalog(), "");
}

void units(std::string_view input) {
  for (units::Dimension d : {units::Dimension::kNone, units::Dimension::kBytes, units::Dimension::kBandwidth,
                             units::Dimension::kTime, units::Dimension::kPower, units::Dimension::kFlopRate,
                             units::Dimension::kFrequency, units::Dimension::kEnergy})
    (void)units::parse(input, d);
}

void calibration(std::string_view input) {
  (void)models::apply_calibration(models::Calibration{}, config::load_string(std::string(input), "fuzz.yaml"));
}

void hf_config(std::string_view input) { (void)workloads::model_from_hf_config(as_file(input, ".json")); }

void profile(std::string_view input) { (void)hw::parse_profile(std::string(input), "fuzz.json"); }

void json_text(std::string_view input) { (void)config::to_json_text(config::parse_json_text(input, "fuzz.json")); }

// A measured kernel or collective table (kernels-aic's CSVs, Vidur's op tables): every reader
// tries the file, and each accepts it or refuses it with a located error.
void kernel_table(std::string_view input) {
  const std::string path = as_file(input, ".csv");
  using Reader = void (*)(const std::string&);
  const Reader readers[] = {
      [](const std::string& f) { (void)models::read_aic_gemm_table(f); },
      [](const std::string& f) { (void)models::read_aic_attention_table(f); },
      [](const std::string& f) { (void)models::read_aic_moe_table(f); },
      [](const std::string& f) { (void)models::read_aic_nccl_table(f); },
      [](const std::string& f) { (void)models::read_aic_custom_all_reduce_table(f); },
      [](const std::string& f) { (void)models::read_vidur_op_table(f); },
  };
  for (Reader read : readers) {
    try {
      read(path);
    } catch (const Error&) {
      // refused with its place: the next reader tries
    }
  }
}

// A validation case file (validate/cases/), read as `exasim validate FILE` reads it.
void validation_case(std::string_view input) { (void)validate::load_cases(as_file(input, ".yaml")); }

// A request trace in `format`, drained (at most 100,000 requests: a fuzz input is small).
void trace(std::string_view input, const char* format) {
  const std::string path = as_file(input, ".trace");
  const config::Node workload = config::load_string(std::string("{trace: '") + path + "', format: " + format + "}", "fuzz");
  auto source = traces::make_request_source(workload, 1, "");
  for (int i = 0; i < 100000 && source->next(); ++i) {
  }
}

}  // namespace

const std::vector<FuzzTarget>& fuzz_targets() {
  static const std::vector<FuzzTarget> targets = {
      {"scenario", scenario},
      {"units", units},
      {"calibration", calibration},
      {"hf_config", hf_config},
      {"profile", profile},
      {"json_text", json_text},
      {"azure", [](std::string_view in) { trace(in, "azure"); }},
      {"burstgpt", [](std::string_view in) { trace(in, "burstgpt"); }},
      {"mooncake", [](std::string_view in) { trace(in, "mooncake"); }},
      {"lengths", [](std::string_view in) { trace(in, "lengths"); }},
      {"kernel_table", kernel_table},
      {"validation_case", validation_case},
  };
  return targets;
}

void run_fuzz_input(const FuzzTarget& target, std::string_view input) {
  try {
    target.run(input);
  } catch (const Error&) {
    // Refused with a located message: what hostile input should get.
  }
}

}  // namespace exasim::fuzz
