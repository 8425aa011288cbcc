#pragma once
// Every rank simulated (DESIGN.md "Symmetry", `simulation.all_ranks: true`): the symmetric graph
// holds one GPU per pipeline stage; here each of the tp x cp x dp ranks of a stage gets its own
// copy of that GPU's program, and each collective becomes what it is on a real cluster: its
// members meet at a barrier (the op starts when the last member arrives) and run it together.
// On a uniform cluster the result equals the symmetric run; ranks that differ (stragglers) make
// the others wait for them at every collective they share.
#include <cstdint>
#include <vector>

#include "workloads/training/training_graph.hpp"
#include "workloads/training/training_plan.hpp"

namespace exasim::workloads {

// A GPU whose kernels take `slowdown` times as long as the model says (thermal throttling, a
// slower part, a noisy neighbour); slowdown < 1 is a faster GPU.
struct Straggler {
  std::uint32_t rank = 0;  // global rank: tp + TP (cp + CP (dp + DP pp)), Megatron's order
  double slowdown = 1;
};

struct RankSimulation {
  bool all_ranks = false;
  std::vector<Straggler> stragglers;  // only with all_ranks
};

// The graph with every rank's copy of its stage's tasks. Replica q of stage s is global rank
// q + (tp cp dp) s; replica 0's devices and streams keep the symmetric graph's ids, and `stages`
// keeps naming them; replica q's copy of task x is task x (tp cp dp) + q (the join barriers follow). Comm ops are rewritten per group instance (ranks shifted to the
// instance's members). Throws PlanError for a straggler rank outside the cluster.
TrainingGraph expand_to_all_ranks(const TrainingGraph& symmetric, const TrainingPlan& plan,
                                  const std::vector<Straggler>& stragglers);

}  // namespace exasim::workloads
