#pragma once
// The space of training plans the search walks: every combination of tensor, pipeline and data
// parallelism, virtual stages, micro-batch, pipeline schedule, ZeRO stage, recompute policy and
// sequence parallelism, context parallelism, optimizer and parameter offload, and for a
// mixture-of-experts model expert and expert-tensor parallelism, cut down by what the scenario's
// `plan_space:` pins:
//   plan_space:
//     tp: [4, 8]                  # a value, a list, or auto (every value that can run)
//     pp: auto
//     dp: auto                    # follows from the GPU count; a list restricts it
//     vpp: auto                   # virtual stages (interleaved schedule only)
//     micro_batch: [1, 2]
//     schedule: [1f1b, interleaved]
//     zero: [1]
//     recompute: [selective, full]  # or block: full recompute of the fewest layers of each
//                                 # model chunk that fit (Megatron --recompute-method block)
//     sequence_parallel: true
//     cp: auto                    # context parallel: each GPU keeps >= 4096 tokens of a sequence
//                                 # (auto; a list may go lower), seq_len splits into 2 cp chunks
//     ep: auto                    # MoE: every divisor of the experts that divides tp x cp x dp (dense: 1)
//     etp: auto                   # MoE: experts whole (1) or split as the dense layers (tp, Megatron's default)
//     offload: auto               # none, optimizer-cpu (ZeRO-Offload), params-cpu and nvme (ZeRO-
//                                 # Infinity, zero 3) where the cluster's servers describe their host
//                                 # side (nvme: with drive rates); dense models without LoRA
//     allow_tp_across_nodes: false
//     uneven_split: true          # lighter first/last stage when the layers do not divide (Llama 3)
//     memory_margin: 0.1          # keep this fraction of GPU memory free (default: objective's)
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/config/node.hpp"
#include "models/memory/activation_memory.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model/model_spec.hpp"
#include "workloads/training/training_config.hpp"

namespace exasim::workloads::planner {

// One point of the space. schedule indexes pipeline_schedules() (pipeline_schedule.hpp).
struct Candidate {
  int tp = 1, pp = 1, dp = 1, vpp = 1;
  int cp = 1;  // context parallel (ring attention; ranks between TP and DP)
  int ep = 1;   // expert parallel (MoE; ep x etp carved from tp x cp x dp)
  int etp = 1;  // expert tensor parallel: each routed expert split over etp GPUs
  std::uint8_t offload = 0;  // index into offload_modes()
  int micro_batch = 1;
  std::uint8_t schedule = 0;
  std::uint8_t zero = 0;
  models::Recompute recompute = models::Recompute::kNone;
  // With full recompute: the first N layers of each model chunk (TrainingConfig::recompute_layers;
  // 0: all). kFewestThatFit: the search sets the fewest that fit (Estimator::fewest_recompute_layers).
  int recompute_layers = 0;
  static constexpr int kFewestThatFit = -1;
  bool sequence_parallel = false;
  int first_stage_layers = 0, last_stage_layers = 0;  // 0, 0: even split
};

struct PlanSpace {
  // Empty = auto.
  std::vector<int> tp, pp, dp, cp, ep, etp, vpp, micro_batch, zero;
  std::vector<std::uint8_t> schedule;
  std::vector<models::Recompute> recompute;  // listed policies (none, selective, full)
  bool recompute_auto = true;   // `recompute` not given: none, selective, full and block
  bool block_recompute = true;  // `block` listed, or auto
  std::vector<std::uint8_t> offload;  // indices into offload_modes()
  std::vector<bool> sequence_parallel;
  bool allow_tp_across_nodes = false;
  bool uneven_split = true;
  std::optional<double> memory_margin;
};

// The offload settings a plan may take: none, optimizer-cpu, params-cpu, nvme (training.offload).
const std::vector<std::string>& offload_modes();

// Reads `plan_space:` (undefined: everything auto). Throws ConfigError naming the key.
PlanSpace read_plan_space(const config::Node& n);

// The training settings of a candidate on top of the scenario's (seq_len, batch, precision,
// attention kernel, overlap options stay the scenario's).
TrainingConfig candidate_config(const TrainingConfig& base, const Candidate& c);
// The candidate a training config describes (for the scenario's own plan).
Candidate candidate_of(const TrainingConfig& config);

// "tp 8 pp 16 dp 8 cp 2 ep 8 vpp 2 mb 1 interleaved zero 1 rc selective sp" — for tables and messages.
std::string describe(const Candidate& c);

// Every candidate of the space whose tp x pp x cp x dp uses all GPUs, with splits of the layers the
// simulator runs. Divisibility of heads and batch is left to the constraint check, except where
// it keeps the enumeration small (dp must divide the global batch, micro_batch its share).
// Duplicates are left out: one schedule when pp = 1 (1F1B when allowed: GPipe would hold every
// micro-batch's activations for the same time), one ZeRO stage when dp = 1, no sequence
// parallelism when tp = 1. Order is deterministic.
std::vector<Candidate> enumerate_candidates(const PlanSpace& space, const ModelSpec& model, const TrainingConfig& base,
                                            const topologies::Cluster& cluster);

// The lighter-ends split Megatron-Core uses when pp x vpp does not divide the layers: middle
// virtual stages get ceil(layers / stages), the first and last share the rest (first gets the
// larger half). nullopt when no such split exists.
std::optional<std::pair<int, int>> uneven_split(int layers, int virtual_stages);

}  // namespace exasim::workloads::planner
