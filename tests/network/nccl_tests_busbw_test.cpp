// nccl-tests / RCCL bus bandwidths published in shared/validation/gpu_specs.yaml, reproduced with
// the default collective parameters on the catalog's nodes. The efficiencies behind them were
// fitted to one entry each (A100 8-GPU, MI300X 2-GPU, H200 NVLS 5-8 GPUs; see
// models/collective/collective_params.hpp); the others are checks.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "network_fixture.hpp"

using namespace exasim;
using namespace exasim::testing;
using models::CollectiveAlgorithm;

namespace {

struct Published {
  const char* node;
  int nodes;
  int ranks;
  double gib;
  CollectiveAlgorithm algorithm;  // kAuto unless the source fixed it
  double busbw_gbs;
  const char* what;
};

const Published kPublished[] = {
    {"dgx-a100", 1, 8, 8, CollectiveAlgorithm::kAuto, 235, "A100 8 GPUs (ml-engineering)"},
    {"dgx-h100", 1, 8, 8, CollectiveAlgorithm::kAuto, 480.16, "H100 8 GPUs, 8 GiB (dgxc-benchmarking)"},
    {"dgx-h200", 1, 4, 8, CollectiveAlgorithm::kRing, 363.3, "H200 4 GPUs ring"},
    {"dgx-h200", 1, 8, 8, CollectiveAlgorithm::kRing, 365.6, "H200 8 GPUs ring, NVLS off"},
    {"dgx-h200", 1, 5, 8, CollectiveAlgorithm::kAuto, 414.2, "H200 5 GPUs NVLS"},
    {"dgx-h200", 1, 6, 8, CollectiveAlgorithm::kAuto, 435.6, "H200 6 GPUs NVLS"},
    {"dgx-h200", 1, 7, 8, CollectiveAlgorithm::kAuto, 460.0, "H200 7 GPUs NVLS"},
    {"dgx-h200", 1, 8, 8, CollectiveAlgorithm::kAuto, 473.1, "H200 8 GPUs NVLS"},
    {"dgx-b200", 1, 8, 16, CollectiveAlgorithm::kAuto, 845.67, "B200 8 GPUs, 16 GiB"},
    {"dgx-b200", 4, 32, 16, CollectiveAlgorithm::kAuto, 381.8, "B200 4 nodes x 8, 16 GiB"},
    {"hgx-mi300x", 1, 2, 4, CollectiveAlgorithm::kAuto, 47.671, "MI300X 2 GPUs, 4 GiB"},
    {"hgx-mi300x", 1, 8, 4, CollectiveAlgorithm::kAuto, 312.912, "MI300X 8 GPUs, 4 GiB"},
};

}  // namespace

TEST_CASE("nccl-tests all-reduce bus bandwidths are reproduced within 10%") {
  for (const Published& p : kPublished) {
    const auto c = cluster_of(std::string("{node: ") + p.node + ", nodes: " + std::to_string(p.nodes) + "}");
    sim::AnalyticalNetwork net(c, {}, forcing(models::Collective::kAllReduce, p.algorithm));
    const auto cost = net.cost(op_on(c, sim::CommKind::kAllReduce, p.gib * 1073741824.0, "packed", p.ranks));
    const double predicted = cost.bus_bandwidth / 1e9;
    MESSAGE(std::string(p.what), ": predicted ", predicted, " GB/s (", models::algorithm_name(cost.algorithm), "), measured ",
            p.busbw_gbs, " GB/s, ", 100 * (predicted / p.busbw_gbs - 1), "%");
    CHECK(predicted == exasim::testing::approx(p.busbw_gbs).epsilon(0.10));
  }
}
