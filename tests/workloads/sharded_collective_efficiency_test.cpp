// A framework calibration's sharded_collective_efficiency (models::HostOverheads): a framework
// that reaches a fraction e of the network's rate on its ZeRO collectives takes 1/e as long over
// them, so the lowering puts bytes / e on the wire of every collective over a shard group (the
// gradients' reduce-scatter and the weights' all-gather of ZeRO-1/2 after the step, and ZeRO-3's
// per-layer gathers, dense and expert), and nothing else: DDP's all-reduce of a ZeRO-0 run,
// the tensor-parallel and expert-parallel collectives and the gradient norm keep their bytes.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <map>
#include <string>

#include "graph_traffic.hpp"
#include "training_fixture.hpp"
#include "workloads/model/model_config.hpp"
#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_plan.hpp"

using namespace exasim;
using namespace exasim::workloads;

namespace {

ModelSpec mixtral() { return resolve_model(config::load_string("mixtral-8x7b", "<test>"), testing::catalog(), "."); }

// 16 GPUs: tp 2, dp 8, ep 4: the experts' replicas are pairs, the dense weights' shard group 8.
std::map<std::string, testing::LabelTraffic> traffic(int zero, double efficiency) {
  TrainingConfig c = testing::config(2, 1, 8, 16);
  c.seq_len = 4096;
  c.parallelism.ep = 4;
  c.parallelism.sequence_parallel = true;
  c.attention = AttentionKernel::kFlash;
  c.zero = zero;
  const TrainingPlan plan(mixtral(), c, 16, 8);
  const topologies::Cluster cluster = testing::ideal_cluster(2, 8);
  KernelContext k{cluster.gpu, models::KernelParams::defaults_for(cluster.gpu)};
  k.overheads.sharded_collective_efficiency = efficiency;
  return testing::traffic_by_label(build_training_graph(plan, k));
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("sharded collective efficiency: ZeRO's shard-group collectives carry bytes / e, every other collective its own") {
  for (int zero : {1, 3}) {
    CAPTURE(zero);
    const auto full = traffic(zero, 1.0), quarter = traffic(zero, 0.25);
    REQUIRE(full.size() == quarter.size());
    int sharded = 0;
    for (const auto& [label, t] : full) {
      CAPTURE(label);
      REQUIRE(quarter.count(label) == 1);
      const bool over_shards = starts_with(label, "dp grads") || starts_with(label, "dp weights") ||
                               starts_with(label, "expert grads") || starts_with(label, "expert weights") ||
                               starts_with(label, "fsdp");
      CHECK(quarter.at(label).count == t.count);
      CHECK(quarter.at(label).bytes == exasim::testing::approx(over_shards ? 4 * t.bytes : t.bytes));
      sharded += over_shards ? 1 : 0;
    }
    CHECK(sharded > 0);
    CHECK(full.count("gradient norm all-reduce") == 1);
  }
}

TEST_CASE("sharded collective efficiency: DDP's gradient all-reduce (ZeRO-0) is not a sharded collective") {
  const auto full = traffic(0, 1.0), quarter = traffic(0, 0.25);
  int all_reduces = 0;
  for (const auto& [label, t] : full) {
    CAPTURE(label);
    CHECK(quarter.at(label).bytes == exasim::testing::approx(t.bytes));
    all_reduces += starts_with(label, "dp grads") ? 1 : 0;
  }
  CHECK(all_reduces > 0);
}
