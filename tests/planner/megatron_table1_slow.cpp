// The search on the Megatron-LM SC'21 Table 1 model/cluster pairs (validate/cases/): the plan it
// ranks first must be predicted at least as fast as the published plan, and the published plan
// must be in the top 10. Two spaces:
//  - Table 1's: the dimensions the table reports (tp, pp, dp), everything else as the validation
//    case fixes it (1F1B, micro-batch 1, full recompute, no ZeRO, no sequence parallelism, even
//    layer splits);
//  - Megatron-LM 2021's: also virtual stages, micro-batch and schedule (GPipe, 1F1B,
//    interleaved), still without what it did not have (ZeRO, sequence parallelism, selective
//    recompute). Here the published plan's rank is reported, not asserted: the model finds
//    faster plans (interleaving, larger micro-batches) than the table's.
// Both keep 10% of GPU memory free (the iteration_time objective's margin: allocator caching and
// fragmentation), as plans at the edge of 80 GB were not an option for the paper's runs either.
#include <doctest/doctest.h>

#include <cstdio>

#include "planner_fixture.hpp"
#include "validate/validation_case.hpp"
#include "workloads/planner/plan_search.hpp"

using namespace exasim;
using namespace exasim::workloads;
using namespace exasim::workloads::planner;

namespace {

struct Outcome {
  std::string first, published;
  double first_s = 0, published_s = 0;
  std::size_t rank = 0, enumerated = 0, runnable = 0;
};

Outcome search(const validate::ValidationCase& c, const std::string& space_yaml) {
  const config::Node space = config::load_string(space_yaml, "<test>");
  const Scenario s = scenario_from_node(validate::merge_nodes(c.scenario, space), testing::planner_catalog(), ".");
  const PlannerInputs in = PlannerInputs::from(s);
  SearchOptions o;
  o.top_k = 10;
  o.also_simulate = {candidate_of(*s.training)};
  const SearchResult r = search_plans(in, o);
  REQUIRE(!r.plans.empty());
  Outcome out;
  for (std::size_t i = 0; i < r.plans.size(); ++i)
    if (r.plans[i].requested) out.rank = i + 1;
  REQUIRE(out.rank > 0);
  const RankedPlan& pub = r.plans[out.rank - 1];
  out.first = describe(r.plans.front().candidate);
  out.first_s = r.plans.front().simulated.iteration_time_s;
  out.published = describe(pub.candidate);
  out.published_s = pub.simulated.iteration_time_s;
  out.enumerated = r.enumerated;
  out.runnable = r.runnable;
  return out;
}

void print(const char* id, const Outcome& o) {
  std::printf("%-24s %-48s %8.3f  %-40s %8.3f  %4zu  %5.1f%%  %zu/%zu\n", id, o.first.c_str(), o.first_s, o.published.c_str(),
              o.published_s, o.rank, 100 * (o.published_s / o.first_s - 1), o.runnable, o.enumerated);
}

}  // namespace

TEST_CASE("Megatron SC'21 Table 1: first plan at least as fast as the published one, published plan in the top 10") {
  const auto cases = validate::load_cases(std::string(EXASIM_SOURCE_DIR) + "/validate/cases/megatron-sc21-table1.yaml");
  REQUIRE(cases.size() == 10);
  const char* table1 =
      "plan_space: {schedule: 1f1b, micro_batch: 1, zero: 0, recompute: full, sequence_parallel: false, uneven_split: false, cp: 1, offload: none, "
      "memory_margin: 0.1}";
  const char* megatron =
      "plan_space: {zero: 0, recompute: full, sequence_parallel: false, schedule: [gpipe, 1f1b, interleaved], uneven_split: false, cp: 1, offload: none, "
      "memory_margin: 0.1}";
  std::printf("%-24s %-48s %8s  %-40s %8s  %4s  %6s  %s\n", "case", "first plan", "iter s", "published plan", "iter s", "rank",
              "gain", "runnable/candidates");
  for (const auto& c : cases) {
    INFO(c.id);
    const Outcome a = search(c, table1);
    print(c.id.c_str(), a);
    CHECK(a.first_s <= a.published_s);
    CHECK(a.rank <= 10);
    const Outcome b = search(c, megatron);
    print((c.id + " (+vpp/mb)").c_str(), b);
    CHECK(b.first_s <= b.published_s);
  }
}
