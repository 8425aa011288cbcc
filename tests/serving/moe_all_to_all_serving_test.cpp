// Serving an MoE model with its expert-parallel exchange on the measured all-to-all kernels
// (serving.moe_all_to_all: deepep | nvlink-two-sided): each MoE layer pays the kernels' dispatch
// and combine as models/collective/expert_all_to_all prices them from the node's calibration,
// DeepEP's low-latency kernels for decode-only iterations and its normal ones otherwise; a node
// calibration without the kernels' constants, or a group beyond one node, is refused.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "hw/error.hpp"
#include "models/calibration/calibration_file.hpp"
#include "models/collective/collective_model.hpp"
#include "serving_fixture.hpp"
#include "workloads/serving/iteration_cost.hpp"

namespace {

using namespace exasim;
namespace sv = testing::sv;
using models::ExpertAllToAllKernel;
using models::ExpertAllToAllPhase;
using models::ExpertPayload;
using testing::approx;

const std::string kCalibration = std::string(EXASIM_SOURCE_DIR) + "/configs/calibration/";

// DeepSeek-V3 in fp8 on one 8-GPU node, experts over all 8 GPUs, on a node's collective calibration.
workloads::Scenario deepseek(const std::string& gpu, const std::string& extra = "") {
  return testing::serving_scenario("  replicas: 1\n  parallelism: {tp: 8, ep: 8}\n  precision: fp8\n" + extra, "deepseek-v3",
                                   8, gpu);
}

sv::IterationCostModel cost_model(const workloads::Scenario& s, const std::string& node_file, sv::MoeAllToAll kind) {
  sv::CostModelInputs in = testing::pool_cost_model(s, s.model).inputs();
  in.collective = models::load_calibration({}, kCalibration + node_file).collective;
  in.moe_all_to_all = kind;
  return sv::IterationCostModel(std::move(in));
}

// One exchange (dispatch and combine, and prepare for the NVLink kernel) from the kernels' own
// functions and the file's constants.
double exchange(const models::CollectiveParams& c, ExpertAllToAllKernel k, ExpertPayload dispatch, double tokens, int sms) {
  const models::ExpertExchange x{tokens / 8, 7168, 8, 256, 8, 20};
  double t = 0;
  for (const models::ExpertAllToAllKey& key : std::vector<models::ExpertAllToAllKey>{
           {k, ExpertAllToAllPhase::kPrepare, ExpertPayload::kBf16},
           {k, ExpertAllToAllPhase::kDispatch, dispatch},
           {k, ExpertAllToAllPhase::kCombine, ExpertPayload::kBf16}})
    if (c.expert_all_to_all.contains(key)) t += models::expert_all_to_all_time(key, x, sms, c.expert_all_to_all.at(key));
  return t;
}

}  // namespace

TEST_CASE("serving moe_all_to_all deepep: each MoE layer's exchange on DeepEP, low-latency for decode-only iterations") {
  const auto s = deepseek("H100-SXM5-80GB", "  moe_all_to_all: deepep\n");
  REQUIRE(s.serving_config->moe_all_to_all == sv::MoeAllToAll::kDeepEp);
  const auto m = cost_model(s, "dgx-h100-aic-nccl.yaml", sv::MoeAllToAll::kDeepEp);
  const auto nccl = cost_model(s, "dgx-h100-aic-nccl.yaml", sv::MoeAllToAll::kNccl);
  const models::CollectiveParams& c = m.inputs().collective;
  const int moe_layers = s.model.layers - s.model.moe->dense_layers;
  REQUIRE(moe_layers == 58);
  // 512 tokens (64 a rank): decode-only on the low-latency kernels, with prefill on the normal ones;
  // the layers' other work is the same, so the difference is the kernels' by hand.
  const double ll = exchange(c, ExpertAllToAllKernel::kDeepEpLowLatency, ExpertPayload::kFp8, 512, 132);
  const double normal = exchange(c, ExpertAllToAllKernel::kDeepEpNormal, ExpertPayload::kFp8, 512, 132);
  CHECK(m.linear_time(512, 0, true) - m.linear_time(512, 0, false) == approx(moe_layers * (ll - normal)).epsilon(1e-9));
  // At 64 tokens a rank the low-latency kernels are the faster (H100's tables: ~25 + 40 us against
  // ~50 + 85 us for the normal ones on 20 SMs).
  CHECK(ll < normal);
  // NCCL's model prices other bytes (top-k equal buffers, bf16); the layers' compute is common.
  CHECK(m.linear_time(512, 0, false) != nccl.linear_time(512, 0, false));
  CHECK(nccl.linear_time(512, 0, true) == nccl.linear_time(512, 0, false));
  // An iteration of decodes takes the decode-only path.
  sv::BatchShape decodes;
  decodes.decodes = 512;
  decodes.decode_context = decodes.decode_window_context = 512 * 1024.0;
  CHECK(m.time(decodes).linear == approx(m.linear_time(512, 0, true)).epsilon(1e-12));
  sv::BatchShape mixed = decodes;
  mixed.decodes = 511;
  mixed.prefills.push_back({1, 0});
  CHECK(m.time(mixed).linear == approx(m.linear_time(512, 0, false)).epsilon(1e-12));
}

TEST_CASE("serving moe_all_to_all nvlink-two-sided: prepare, dispatch in the serving format, bf16 combine") {
  const auto s = deepseek("GB200", "  moe_all_to_all: nvlink-two-sided\n");
  const auto m = cost_model(s, "gb200-nvl72-aic-nccl.yaml", sv::MoeAllToAll::kNvlinkTwoSided);
  const auto none = cost_model(s, "gb200-nvl72-aic-nccl.yaml", sv::MoeAllToAll::kNccl);
  const models::CollectiveParams& c = m.inputs().collective;
  CHECK(sv::expert_exchange_keys(sv::MoeAllToAll::kNvlinkTwoSided, DType::kFp8, false)[1].payload == ExpertPayload::kFp8);
  CHECK(sv::expert_exchange_keys(sv::MoeAllToAll::kNvlinkTwoSided, DType::kFp4, false)[1].payload == ExpertPayload::kNvfp4);
  // The same decode-only or not; 4096 tokens: 58 layers x (prepare + fp8 dispatch + combine).
  const double x = exchange(c, ExpertAllToAllKernel::kNvlinkTwoSided, ExpertPayload::kFp8, 4096, 152);
  CHECK(x > 0);
  CHECK(m.linear_time(4096, 0, true) == m.linear_time(4096, 0, false));
  // Against NCCL's pricing of the same layers: the layers differ only in the exchange, NCCL's being
  // two all-to-alls of the rank's top-k bf16 copies (4096 x 8 x 7168 x 2 B / 8).
  const sv::CostModelInputs& in = none.inputs();
  const double a2a = models::collective_cost(models::Collective::kAllToAll, 4096.0 * 8 * 7168 * 2 / 8, models::GroupShape{8, 8},
                                             in.links, in.collective).time_s;
  CHECK(m.linear_time(4096, 0, false) - none.linear_time(4096, 0, false) == approx(58 * (x - 2 * a2a)).epsilon(1e-9));
}

TEST_CASE("serving moe_all_to_all: refused without the kernels' constants or beyond one node") {
  // The catalog defaults have no expert all-to-all constants.
  auto s = deepseek("H200-SXM-141GB", "  moe_all_to_all: deepep\n");
  testing::ListSource src({testing::request(0, 0, 16, 4)});
  try {
    testing::run_serving(s, src);
    FAIL("accepted");
  } catch (const ConfigError& e) {
    CHECK(e.where().key == "serving.moe_all_to_all");
    CHECK(std::string(e.what()).find("have no deepep_normal_dispatch") != std::string::npos);
  }
  // With them it runs.
  s.calibration.collective = models::load_calibration({}, kCalibration + "dgx-h200-aic-nccl.yaml").collective;
  testing::ListSource again({testing::request(0, 0, 16, 4)});
  CHECK(testing::run_serving(s, again).completed == 1);
  // DGX H200 has DeepEP's constants but not the NVL72 kernel's.
  auto n = deepseek("H200-SXM-141GB", "  moe_all_to_all: nvlink-two-sided\n");
  n.calibration.collective = s.calibration.collective;
  testing::ListSource third({testing::request(0, 0, 16, 4)});
  CHECK_THROWS_WITH_AS(testing::run_serving(n, third), doctest::Contains("nvlink_two_sided_prepare"), ConfigError);
  // Experts over two 4-GPU nodes: the intranode kernels cannot join them.
  const std::string yaml = "name: test\ncluster: {gpu: H200-SXM-141GB, gpus_per_node: 4, nodes: 2, "
                           "inter_node: {topology: fat-tree, nic: ib-ndr-400, nics_per_node: 4}}\nmodel: deepseek-v3\n"
                           "serving:\n  replicas: 1\n  parallelism: {tp: 8, ep: 8}\n  precision: fp8\n  moe_all_to_all: deepep\n"
                           "  workload: {arrival: offline, requests: 1, prompt_tokens: 1, output_tokens: 1}\n";
  auto wide = workloads::scenario_from_node(config::load_string(yaml, "test.yaml"), testing::serving_catalog(), ".");
  wide.calibration.collective = s.calibration.collective;
  testing::ListSource fourth({testing::request(0, 0, 16, 4)});
  CHECK_THROWS_WITH_AS(testing::run_serving(wide, fourth), doctest::Contains("ep 8 spans nodes"), ConfigError);
  // A bad choice is refused by the reader with the choices.
  CHECK_THROWS_WITH_AS(deepseek("H100-SXM5-80GB", "  moe_all_to_all: pplx\n"), doctest::Contains("deepep"), ConfigError);
}
