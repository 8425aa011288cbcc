// TP and PP inside a replica: TP splits every GEMM and adds two all-reduces per layer (their cost
// from the collective model); PP runs the stages one after the other for a batch and hands the
// activations on, and each stage holds only its layers' weights and KV.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>

#include "models/collective/collective_model.hpp"
#include "models/collective/custom_all_reduce.hpp"
#include "serving_fixture.hpp"
#include "workloads/serving/iteration_cost.hpp"
#include "workloads/serving/serving_memory.hpp"

namespace {

using namespace exasim;
namespace sv = testing::sv;

sv::IterationCostModel cost_of(const workloads::Scenario& s, models::GroupLinks links) {
  const auto& c = *s.serving_config;
  const auto& p = c.pools[0];
  return sv::IterationCostModel({s.model, p.gpu, p.kernel, s.calibration.collective, links, 8, p.parallelism, c.precision,
                                 c.kv_dtype, 0, 0, nullptr});
}

}  // namespace

TEST_CASE("serving: TP adds exactly two all-reduces per layer of the collective model") {
  const auto s = testing::serving_scenario("  parallelism: {tp: 4}\n");
  const models::GroupLinks links{s.cluster.intra.bandwidth, s.cluster.intra.latency, 0, 0};
  const models::GroupLinks free{1e30, 0, 0, 0};
  models::CollectiveParams no_overhead = s.calibration.collective;
  const double T = 2048;
  const double with = cost_of(s, links).linear_time(T, 1);
  const double without = cost_of(s, free).linear_time(T, 1);
  const double ar = models::collective_cost(models::Collective::kAllReduce, T * double(s.model.hidden) * 2, {4, 4}, links,
                                            s.calibration.collective).time_s;
  const double ar_free = models::collective_cost(models::Collective::kAllReduce, T * double(s.model.hidden) * 2, {4, 4},
                                                 free, no_overhead).time_s;
  const double gather = 0;  // the LM head's logit gather is tiny next to 64 all-reduces
  CHECK(with - without == exasim::testing::approx(2 * s.model.layers * (ar - ar_free) + gather).epsilon(0.01));
  const auto one = testing::serving_scenario("  parallelism: {tp: 1}\n");
  CHECK(without < cost_of(one, links).linear_time(T, 1));  // the GEMMs are split four ways
}

// The engine's own all-reduce (TensorRT-LLM's, vLLM's custom all-reduce): a decode step's small
// TP all-reduces take the faster of it and NCCL, by hand from custom_all_reduce_time.
TEST_CASE("serving: TP all-reduces inside a node take the engine's own all-reduce where it is faster") {
  auto s = testing::serving_scenario("  parallelism: {tp: 4}\n");
  const models::GroupLinks links{s.cluster.intra.bandwidth, s.cluster.intra.latency, 0, 0};
  s.calibration.collective.launch_overhead_s = 6e-6;  // NCCL's per call, as fitted on H100
  const double T = 16;                                // a decode step of 16 sequences
  const double bytes = T * double(s.model.hidden) * 2;
  const double nccl = models::collective_cost(models::Collective::kAllReduce, bytes, {4, 4}, links,
                                              s.calibration.collective).time_s;
  const double ncc_only = cost_of(s, links).linear_time(T, 1);
  s.calibration.collective.custom_all_reduce_efficiency = 0.45;
  s.calibration.collective.custom_all_reduce_overhead_s = 3e-6;
  // One-shot: the overhead and 3 peers' whole buffers at 45% of the GPU's link rate.
  const double one_shot = 3e-6 + 3 * bytes / (links.intra_bandwidth * 0.45);
  CHECK(models::custom_all_reduce_time(bytes, 4, links.intra_bandwidth, s.calibration.collective) ==
        exasim::testing::approx(one_shot));
  REQUIRE(one_shot < nccl);
  const double with_custom = cost_of(s, links).linear_time(T, 1);
  CHECK(ncc_only - with_custom == exasim::testing::approx(2 * s.model.layers * (nccl - one_shot)).epsilon(0.01));
  // Large buffers: NCCL, which is faster there, prices them.
  const double big = 256e6;
  CHECK(models::custom_all_reduce_time(big, 4, links.intra_bandwidth, s.calibration.collective) >
        models::collective_cost(models::Collective::kAllReduce, big, {4, 4}, links, s.calibration.collective).time_s);
  models::CollectiveParams none;
  CHECK(std::isinf(models::custom_all_reduce_time(bytes, 4, links.intra_bandwidth, none)));  // the catalog default
}

TEST_CASE("serving: PP stages run in series and each holds half the weights") {
  const auto pp1 = testing::serving_scenario("  parallelism: {tp: 1}\n", "llama3.1-70b");
  const auto pp2 = testing::serving_scenario("  parallelism: {tp: 1, pp: 2}\n", "llama3.1-70b");
  const models::GroupLinks links{pp1.cluster.intra.bandwidth, pp1.cluster.intra.latency, 0, 0};
  const double one = cost_of(pp1, links).prefill_time(1000);
  const double two = cost_of(pp2, links).prefill_time(1000);
  const double send = models::collective_cost(models::Collective::kSendRecv, 1000.0 * double(pp1.model.hidden) * 2, {2, 2},
                                              links, pp1.calibration.collective).time_s;
  CHECK(two == exasim::testing::approx(one + send).epsilon(1e-9));
  const auto& c2 = *pp2.serving_config;
  const auto m2 = sv::replica_memory(pp2.model, c2.pools[0], c2);
  CHECK(m2.weights_bytes < 0.52 * pp2.model.parameter_count() * 2);
  CHECK(m2.kv_bytes_per_token == exasim::testing::approx(sv::kv_cache_bytes(pp2.model, 1, c2.kv_dtype) / 2));
}
