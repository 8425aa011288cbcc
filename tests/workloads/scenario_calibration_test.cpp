// A scenario's `calibration:` key: none (the datasheet + family defaults, also what a scenario
// without the key runs on), measured (the GPU's and node's files configs/calibration/defaults.yaml
// names, the ones exasim kernel and exasim collective use by default), a file or mapping, and a
// list of these applied in order. Checked against the files themselves, read apart.
#include <doctest/doctest.h>

#include <string>

#include "hw/catalog.hpp"
#include "hw/config/node.hpp"
#include "hw/error.hpp"
#include "models/calibration/calibration_file.hpp"
#include "models/calibration/default_calibration.hpp"
#include "validate/validation_case.hpp"
#include "workloads/scenario/scenario.hpp"

namespace exasim {

namespace {

const std::string kSource = EXASIM_SOURCE_DIR;
const std::string kConfigs = kSource + "/configs";

const hw::Catalog& catalog() {
  static const hw::Catalog c = hw::Catalog::load(kConfigs);
  return c;
}

std::string training_scenario(const std::string& cluster, const std::string& calibration) {
  return "cluster: " + cluster + "\nmodel: llama3.1-8b\n" +
         "training: {seq_len: 4096, micro_batch: 1, global_batch: 8, parallelism: {tp: 8, pp: 1, dp: 1}}\n" +
         (calibration.empty() ? "" : "calibration: " + calibration + "\n");
}

workloads::Scenario scenario(const std::string& cluster, const std::string& calibration) {
  return workloads::scenario_from_node(config::load_string(training_scenario(cluster, calibration), "calibration-test.yaml"),
                                       catalog(), kSource);
}

const std::string kDgxH100 = "{gpu: H100-SXM5-80GB, gpus_per_node: 8, intra_node: nvswitch-h100, nodes: 1}";

// What the index names for a GPU and a node, read apart from the scenario reader.
models::Calibration measured(const std::string& gpu, const std::string& node, const hw::GpuSpec& spec) {
  models::Calibration c;
  c.kernel = models::KernelParams::defaults_for(spec);
  c = models::load_calibration(c, models::default_calibration(kConfigs, models::CalibrationFor::kGpu, gpu));
  return models::load_calibration(c, models::default_calibration(kConfigs, models::CalibrationFor::kNode, node));
}

}  // namespace

TEST_CASE("scenario calibration: none and no key are the family defaults, measured the GPU's and node's files") {
  const workloads::Scenario none = scenario(kDgxH100, "none");
  const workloads::Scenario absent = scenario(kDgxH100, "");
  const models::KernelParams family = models::KernelParams::defaults_for(none.cluster.gpu);
  for (const workloads::Scenario* s : {&none, &absent}) {
    CHECK(s->calibration.kernel.source == family.source);
    CHECK(s->calibration.kernel.matrix_efficiency == family.matrix_efficiency);
    CHECK(s->calibration.collective.intra_efficiency == models::CollectiveParams{}.intra_efficiency);
    CHECK(s->calibration.collective.source == "catalog defaults");
  }

  const workloads::Scenario m = scenario(kDgxH100, "measured");
  const models::Calibration files = measured("H100-SXM5-80GB", "dgx-h100", m.cluster.gpu);
  CHECK(m.calibration.kernel.source == "calibration: " + kConfigs + "/calibration/h100-sxm5-80gb-aic.yaml");
  CHECK(m.calibration.collective.source == "calibration: " + kConfigs + "/calibration/dgx-h100-aic-nccl.yaml");
  // Every named parameter as the files give it (the fitted ones differ from the family's).
  models::KernelParams got_kernel = m.calibration.kernel;
  const auto got = models::named_params(got_kernel);
  models::KernelParams want_kernel = files.kernel;
  const auto want = models::named_params(want_kernel);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK_MESSAGE(*got[i].value == *want[i].value, got[i].name);
  CHECK(m.calibration.kernel.matrix_efficiency != family.matrix_efficiency);
  for (const models::CollectiveParamSlot& slot : models::collective_param_slots())
    CHECK_MESSAGE(m.calibration.collective.*slot.field == files.collective.*slot.field, slot.name);
  CHECK(m.calibration.collective.intra_efficiency != models::CollectiveParams{}.intra_efficiency);
}

TEST_CASE("scenario calibration: measured follows the GPU and its node fabric") {
  // A GPU modified inline keeps its base's kernel file (a what-if on the datasheet).
  const workloads::Scenario modified = scenario(
      "{gpu: {base: A100-SXM4-80GB, hbm_bandwidth: 3 TB/s}, gpus_per_node: 8, intra_node: nvswitch-a100, nodes: 1}",
      "measured");
  CHECK(modified.calibration.kernel.source == "calibration: " + kConfigs + "/calibration/a100-sxm4-80gb-aic.yaml");
  CHECK(modified.calibration.collective.source == "calibration: " + kConfigs + "/calibration/dgx-a100-aic-nccl.yaml");
  // No catalog node joins A100s with H100's switches: the kernel file, the collective defaults.
  const workloads::Scenario odd =
      scenario("{gpu: A100-SXM4-80GB, gpus_per_node: 8, intra_node: nvswitch-h100, nodes: 1}", "measured");
  CHECK(odd.calibration.kernel.source == "calibration: " + kConfigs + "/calibration/a100-sxm4-80gb-aic.yaml");
  CHECK(odd.calibration.collective.source == "catalog defaults");
  // A GPU with no table of its own takes the sibling's file the index names (B300: B200's).
  const workloads::Scenario b300 =
      scenario("{gpu: B300, gpus_per_node: 8, intra_node: nvswitch-b300, nodes: 1}", "measured");
  CHECK(b300.calibration.kernel.source == "calibration: " + kConfigs + "/calibration/b200-aic.yaml");
  // The same for the node: DGX B300 (B300s on nvswitch-b300) on DGX B200's collective file.
  CHECK(b300.calibration.collective.source == "calibration: " + kConfigs + "/calibration/dgx-b200-aic-nccl.yaml");
  // A GPU the index does not list runs on its family defaults.
  const workloads::Scenario pcie =
      scenario("{gpu: H100-PCIe-80GB, gpus_per_node: 8, intra_node: pcie-gen5, nodes: 1}", "measured");
  CHECK(pcie.calibration.kernel.source == models::KernelParams::defaults_for(pcie.cluster.gpu).source);
  CHECK(pcie.calibration.collective.source == "catalog defaults");
}

TEST_CASE("scenario calibration: a list applies in order, none stands alone, a missing file is named") {
  const workloads::Scenario s = scenario(kDgxH100, "[measured, {kernel: {hbm_efficiency: 0.5}, collective: {launch_overhead: 3 us}}]");
  CHECK(s.calibration.kernel.hbm_efficiency == 0.5);
  CHECK(s.calibration.collective.launch_overhead_s == doctest::Approx(3e-6));
  const models::Calibration files = measured("H100-SXM5-80GB", "dgx-h100", s.cluster.gpu);
  CHECK(s.calibration.kernel.matrix_efficiency == files.kernel.matrix_efficiency);
  CHECK(s.calibration.collective.intra_efficiency == files.collective.intra_efficiency);

  CHECK_THROWS_WITH_AS(scenario(kDgxH100, "[measured, none]"),
                       doctest::Contains("none stands alone"), ConfigError);
  CHECK_THROWS_WITH_AS(scenario(kDgxH100, "no-such-calibration.yaml"),
                       doctest::Contains("calibration file not found"), IoError);
}

TEST_CASE("validate --calibration: the item first, the case's own calibration over it") {
  validate::ValidationCase c;
  c.id = "x";
  c.scenario = config::load_string(training_scenario(kDgxH100, "{training: {sharded_collective_efficiency: 0.5}}"), "case.yaml");
  const validate::ValidationCase m = validate::with_calibration_first(c, "measured");
  const workloads::Scenario s = workloads::scenario_from_node(m.scenario, catalog(), kSource);
  CHECK(s.calibration.kernel.source == "calibration: " + kConfigs + "/calibration/h100-sxm5-80gb-aic.yaml");
  CHECK(s.calibration.host.sharded_collective_efficiency == 0.5);
  // A case without its own: the item alone.
  c.scenario = config::load_string(training_scenario(kDgxH100, ""), "case.yaml");
  const workloads::Scenario alone =
      workloads::scenario_from_node(validate::with_calibration_first(c, "measured").scenario, catalog(), kSource);
  CHECK(alone.calibration.collective.source == "calibration: " + kConfigs + "/calibration/dgx-h100-aic-nccl.yaml");
}

}  // namespace exasim
