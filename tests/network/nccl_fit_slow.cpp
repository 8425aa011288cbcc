// The calibration in configs/calibration/a100-dgx-vidur-nccl.yaml and the network in
// configs/clusters/a100-dgx-vidur.yaml come from fit_nccl (tests/network/vidur_nccl.hpp) on the
// calibration rows; refitting from the catalog defaults finds them again.
#include <doctest/doctest.h>

#include <filesystem>

#include "models/calibration/calibration_file.hpp"
#include "network_fixture.hpp"
#include "vidur_nccl.hpp"

using namespace exasim;
using namespace exasim::testing;

TEST_CASE("refitting the DGX A100 NCCL tables reproduces the committed calibration") {
  const std::string file = std::string(EXASIM_SOURCE_DIR) + "/configs/clusters/a100-dgx-vidur.yaml";
  const config::Node root = config::load_file(file);
  topologies::Cluster committed = workloads::read_cluster(root["cluster"], net_catalog());
  const std::string cal = (std::filesystem::path(file).parent_path() / root["calibration"].as_string()).string();
  models::CollectiveParams committed_params = models::load_calibration({}, cal).collective;

  // Start: catalog defaults, the cluster file's topology with a datasheet-like guess for the network.
  topologies::Cluster start = committed;
  start.inter->nic.bandwidth = 25e9;
  start.inter->gpu_nic_bandwidth = 8e9;
  models::CollectiveParams params;
  const auto rows = load_dgx_tables();
  const double objective = fit_nccl(rows, params, start, 8);
  MESSAGE("fitted objective ", objective);
  for (const FitParameter& p : nccl_fit_parameters()) {
    const double fitted = *p.slot(params, start);
    const double kept = *p.slot(committed_params, committed);
    MESSAGE(std::string(p.name), ": fitted ", fitted, ", committed ", kept);
    CHECK(fitted == doctest::Approx(kept).epsilon(0.05));
  }
}
