#include "workloads/training/training_plan.hpp"

#include <algorithm>
#include <string>

#include "hw/error.hpp"
#include "workloads/training/pipeline_schedule.hpp"

namespace exasim::workloads {

namespace {

[[noreturn]] void reject(const std::string& key, const std::string& what, const std::string& hint) {
  throw PlanError(what, {"", 0, key}, hint);
}

std::string str(long long v) { return std::to_string(v); }

void check_parallelism(const ModelSpec& m, const TrainingConfig& c, int cluster_gpus, int gpus_per_node) {
  const Parallelism& p = c.parallelism;
  if (m.heads % p.tp != 0)
    reject("training.parallelism.tp", "tp " + str(p.tp) + " does not divide the " + str(m.heads) + " attention heads",
           "choose tp among the divisors of " + str(m.heads));
  if (m.ffn % p.tp != 0)
    reject("training.parallelism.tp", "tp " + str(p.tp) + " does not divide ffn " + str(m.ffn), "choose another tp");
  const int uneven = c.first_stage_layers + c.last_stage_layers;
  if (uneven == 0 && m.layers % (p.pp * p.vpp) != 0)
    reject(p.vpp > 1 ? "training.parallelism.vpp" : "training.parallelism.pp",
           (p.vpp > 1 ? "pp*vpp = " + str(p.pp * p.vpp) : "pp " + str(p.pp)) + " does not divide the " + str(m.layers) + " layers",
           std::string(p.vpp > 1 ? "choose pp*vpp" : "choose pp") + " among the divisors of " + str(m.layers) +
               ", or give first_stage_layers and last_stage_layers");
  const int middle = p.pp * p.vpp - 2;
  if (uneven > 0 && (middle <= 0 || (m.layers - uneven) <= 0 || (m.layers - uneven) % middle != 0))
    reject("training.first_stage_layers", "the " + str(m.layers - uneven) + " layers left after the first and last stage do not split evenly over the " +
               str(std::max(middle, 0)) + " middle virtual stages", "adjust first_stage_layers / last_stage_layers");
  // In floating point: degrees of up to 2^31 - 1 each must not wrap around in the product.
  const double product = static_cast<double>(p.tp) * p.pp * p.dp * p.cp;
  if (product != cluster_gpus)
    reject("training.parallelism", "tp*pp*dp*cp = " + str(p.tp) + "*" + str(p.pp) + "*" + str(p.dp) + "*" + str(p.cp) +
               " = " + (product < 9e15 ? str(static_cast<long long>(product)) : std::to_string(product)) + " GPUs, but the cluster has " + str(cluster_gpus),
           "make the product equal the cluster's GPU count");
  if (p.tp > gpus_per_node)
    reject("training.parallelism.tp", "tp " + str(p.tp) + " spans more than one node (" + str(gpus_per_node) + " GPUs)",
           "keep tensor parallelism inside the node fabric");
  if (p.cp > 1 && c.attention != AttentionKernel::kFlash)
    reject("training.parallelism.cp", "context parallelism " + str(p.cp) + " runs ring attention, which needs FlashAttention",
           "set attention_kernel: flash or cp: 1");
  if (p.cp > 1 && m.sliding_window > 0)
    reject("training.parallelism.cp", "context parallelism " + str(p.cp) + " with sliding-window attention (window " +
               std::to_string(m.sliding_window) + ") is not modelled: the ring would skip the blocks outside the window",
           "set cp: 1");
  // Learned positions index a table of max_seq_len rows (Megatron asserts max_position_embeddings
  // >= seq_length); rotary positions have no table, so a longer sequence is the user's choice.
  if (m.position == PositionKind::kLearned && m.max_seq_len > 0 && c.seq_len > m.max_seq_len)
    reject("training.seq_len", "seq_len " + str(c.seq_len) + " exceeds the " + std::to_string(m.max_seq_len) +
               " positions of the model's learned position table (model.max_seq_len)",
           "use seq_len <= " + std::to_string(m.max_seq_len) + " or raise model.max_seq_len");
  if (p.cp > 1 && c.seq_len % (2 * p.cp) != 0)
    reject("training.parallelism.cp", "seq_len " + str(c.seq_len) + " does not split into 2*cp = " + str(2 * p.cp) +
               " equal chunks (Megatron's load-balanced causal split)", "use a seq_len that is a multiple of " + str(2 * p.cp));
  if (c.shard_group > 0) {
    const int replicas = p.dp * p.cp;
    if (c.zero < 1)
      reject("training.shard_group", "shard_group needs sharded states (zero: 1..3)", "set zero: 1, 2 or 3, or remove shard_group");
    if (replicas % c.shard_group != 0)
      reject("training.shard_group", "shard_group " + str(c.shard_group) + " does not divide the " + str(replicas) +
                 " ranks that hold the same weights (dp x cp)", "use a divisor of " + str(replicas) + ", e.g. the GPUs of a node");
    const int copies = replicas / c.shard_group, expert_replicas = p.tp * p.cp * p.dp / (p.ep * p.etp);
    if (m.moe && replicas % c.shard_group == 0 && expert_replicas % copies != 0)
      reject("training.shard_group", "shard_group " + str(c.shard_group) + " makes " + str(copies) +
                 " replicated copies, which do not divide the experts' " + str(expert_replicas) + " replicas (tp x cp x dp / (ep x etp))",
             "choose shard_group so that dp x cp / shard_group divides " + str(expert_replicas) + ", or lower ep");
  }
  if (!m.moe && (c.moe_routing || c.moe_capacity_factor > 0))
    reject(c.moe_routing ? "training.moe_routing_trace" : "training.moe_capacity_factor",
           "routing settings need a mixture-of-experts model", "remove them");
  if (m.moe && c.moe_routing) {
    for (int l = 0; l < m.layers; ++l) {
      if (!m.is_moe_layer(l)) continue;
      const auto& rows = c.moe_routing->tokens;
      const bool complete = static_cast<std::size_t>(l) < rows.size() && rows[l].size() == static_cast<std::size_t>(m.moe->experts) &&
                            std::all_of(rows[l].begin(), rows[l].end(), [](double x) { return x >= 0; });
      if (!complete)
        reject("training.moe_routing_trace", c.moe_routing->file + " does not give all " + str(m.moe->experts) +
                   " experts' tokens for MoE layer " + str(l),
               "log every expert of every MoE layer (layer,expert,tokens; 0-based)");
    }
  }
  if (p.etp != 1 && !m.moe) reject("training.parallelism.etp", "etp " + str(p.etp) + " needs a mixture-of-experts model", "set etp: 1");
  if (p.ep != 1 && !m.moe) reject("training.parallelism.ep", "ep " + str(p.ep) + " needs a mixture-of-experts model", "set ep: 1");
  if (m.moe) {
    // Megatron-Core's expert layout with expert tensor parallelism 1: the tp x cp x dp ranks that
    // share the dense weights form groups of ep, each holding experts / ep whole experts.
    if (m.moe->experts % p.ep != 0)
      reject("training.parallelism.ep", "ep " + str(p.ep) + " does not divide the " + str(m.moe->experts) + " experts",
             "choose ep among the divisors of " + str(m.moe->experts));
    if ((p.tp * p.cp * p.dp) % (p.ep * p.etp) != 0)
      reject("training.parallelism.ep", "ep*etp = " + str(p.ep * p.etp) + " does not divide tp*cp*dp = " + str(p.tp * p.cp * p.dp),
             "expert-parallel groups are carved out of the tp x cp x dp ranks of a stage");
    const std::int64_t expert_ffn = m.moe->expert_ffn > 0 ? m.moe->expert_ffn : m.ffn;
    if (expert_ffn % p.etp != 0)
      reject("training.parallelism.etp", "etp " + str(p.etp) + " does not divide the experts' ffn " + std::to_string(expert_ffn),
             "choose etp among the divisors of " + std::to_string(expert_ffn));
    if (p.etp > gpus_per_node)
      reject("training.parallelism.etp", "etp " + str(p.etp) + " spans more than one node (" + str(gpus_per_node) + " GPUs)",
             "keep expert tensor parallelism inside the node fabric");
    if (c.lora) reject("training.lora", "LoRA on mixture-of-experts layers is not simulated yet", "remove lora");
    if (p.tp > 1 && !p.sequence_parallel)
      reject("training.parallelism.sequence_parallel", "mixture-of-experts layers with tp > 1 need sequence parallelism",
             "set sequence_parallel: true (Megatron-Core requires it)");
  }
}

void check_lora(const TrainingConfig& c) {
  if (!c.lora) return;
}

void check_batch(const TrainingConfig& c) {
  const Parallelism& p = c.parallelism;
  const long long per_replica = c.global_batch / p.dp;
  if (c.global_batch % p.dp != 0)
    reject("training.global_batch", "global batch " + str(c.global_batch) + " does not divide over dp " + str(p.dp),
           "use a multiple of " + str(p.dp));
  if (per_replica % c.micro_batch != 0)
    reject("training.micro_batch", "micro batch " + str(c.micro_batch) + " does not divide the " + str(per_replica) +
               " sequences per data-parallel replica", "use a divisor of " + str(per_replica));
  if (c.zero < 0 || c.zero > 3) reject("training.zero", "zero stage must be 0, 1, 2 or 3", "ZeRO stages are 0..3");
  if ((c.offload == "params-cpu" || c.offload == "nvme") && c.zero < 3)
    reject("training.offload", c.offload + " (ZeRO-Infinity) keeps the parameters sharded off the GPU, which needs zero: 3",
           "set zero: 3, or use offload: optimizer-cpu");
  const ScheduleInfo* schedule = find_pipeline_schedule(c.pipeline_schedule);
  const bool looping = schedule && schedule->interleaved;  // model chunks per rank
  const bool interleaved = c.pipeline_schedule == "interleaved";
  if (p.vpp > 1 && !looping)
    reject("training.parallelism.vpp", "vpp " + str(p.vpp) + " needs pipeline_schedule: interleaved or breadth-first",
           "set vpp: 1 or use interleaved");
  if (interleaved && p.pp > 1 && (per_replica / c.micro_batch) % p.pp != 0)
    reject("training.global_batch", "the interleaved schedule needs the " + str(per_replica / c.micro_batch) +
               " micro-batches per replica to be a multiple of pp " + str(p.pp),
           "use a global batch that gives a multiple of pp micro-batches");
}

}  // namespace

TrainingPlan::TrainingPlan(ModelSpec model, TrainingConfig config, int cluster_gpus, int gpus_per_node)
    : model_(std::move(model)), config_(std::move(config)) {
  check_parallelism(model_, config_, cluster_gpus, gpus_per_node);
  check_batch(config_);
  check_lora(config_);
  micro_batches_ = config_.global_batch / config_.parallelism.dp / config_.micro_batch;
  // A step holds up to ~100 tasks per layer and micro-batch (forward, recompute and backward
  // kernels and their collectives); the engine numbers tasks in 32 bits.
  const double tasks = 100.0 * micro_batches_ * model_.layers;
  if (tasks > 2e9)
    reject("training.global_batch", str(micro_batches_) + " micro-batches per replica of " + str(model_.layers) +
               " layers would be up to " + std::to_string(static_cast<long long>(tasks)) +
               " tasks to simulate, more than the engine numbers (2^32)",
           "simulate a smaller global_batch (the step time grows linearly with the micro-batches) or a larger micro_batch");
  split_layers();
}

void TrainingPlan::split_layers() {
  const Parallelism& p = config_.parallelism;
  const int stages = p.pp * p.vpp;
  const int first = config_.first_stage_layers, last = config_.last_stage_layers;
  virtual_layers_.assign(stages, model_.layers / stages);
  if (first + last > 0) {
    const int middle = (model_.layers - first - last) / (stages - 2);
    virtual_layers_.assign(stages, middle);
    virtual_layers_.front() = first;
    virtual_layers_.back() = last;
  }
  virtual_first_.assign(stages, 0);
  for (int v = 1; v < stages; ++v) virtual_first_[v] = virtual_first_[v - 1] + virtual_layers_[v - 1];
}

int TrainingPlan::layers_on_stage(int stage) const {
  int n = 0;
  for (int c = 0; c < chunks(); ++c) n += layers_in(stage, c);
  return n;
}

std::uint32_t TrainingPlan::rank(int tp, int cp, int dp, int pp) const {
  const Parallelism& p = config_.parallelism;
  return static_cast<std::uint32_t>(tp + p.tp * (cp + p.cp * (dp + p.dp * pp)));
}

std::vector<std::uint32_t> TrainingPlan::tp_group(int stage) const {
  std::vector<std::uint32_t> g;
  for (int t = 0; t < par().tp; ++t) g.push_back(rank(t, 0, 0, stage));
  return g;
}

std::vector<std::uint32_t> TrainingPlan::dp_group(int stage) const {
  std::vector<std::uint32_t> g;
  for (int d = 0; d < par().dp; ++d)
    for (int c = 0; c < par().cp; ++c) g.push_back(rank(0, c, d, stage));
  return g;
}

// Ranks of a stage in (tp, cp, dp) order: q = tp + TP (cp + CP dp), rank = q + TP CP DP pp.
std::vector<std::uint32_t> TrainingPlan::etp_group(int stage) const {
  std::vector<std::uint32_t> g;
  const std::uint32_t base = rank(0, 0, 0, stage);
  for (int q = 0; q < par().etp; ++q) g.push_back(base + static_cast<std::uint32_t>(q));
  return g;
}

std::vector<std::uint32_t> TrainingPlan::ep_group(int stage) const {
  std::vector<std::uint32_t> g;
  const std::uint32_t base = rank(0, 0, 0, stage);
  for (int q = 0; q < par().ep; ++q) g.push_back(base + static_cast<std::uint32_t>(q * par().etp));
  return g;
}

std::vector<std::uint32_t> TrainingPlan::expert_dp_group(int stage) const {
  std::vector<std::uint32_t> g;
  const std::uint32_t base = rank(0, 0, 0, stage);
  for (int j = 0; j < expert_replicas(); ++j) g.push_back(base + static_cast<std::uint32_t>(j * par().ep * par().etp));
  return g;
}

namespace {

// Hybrid sharding splits a group of replicas into consecutive shard groups of `shard`: the first
// of them, and the copies (the first member of each).
std::vector<std::uint32_t> first_shard(std::vector<std::uint32_t> replicas, int shard) {
  replicas.resize(static_cast<std::size_t>(shard));
  return replicas;
}

std::vector<std::uint32_t> copies_of(const std::vector<std::uint32_t>& replicas, int shard) {
  std::vector<std::uint32_t> g;
  for (std::size_t i = 0; i < replicas.size(); i += static_cast<std::size_t>(shard)) g.push_back(replicas[i]);
  return g;
}

}  // namespace

std::vector<std::uint32_t> TrainingPlan::expert_shard_group(int stage) const {
  return first_shard(expert_dp_group(stage), expert_shard_size());
}

std::vector<std::uint32_t> TrainingPlan::expert_replica_group(int stage) const {
  return copies_of(expert_dp_group(stage), expert_shard_size());
}

std::vector<std::uint32_t> TrainingPlan::shard_group(int stage) const { return first_shard(dp_group(stage), shard_size()); }

std::vector<std::uint32_t> TrainingPlan::replica_group(int stage) const { return copies_of(dp_group(stage), shard_size()); }

std::vector<std::uint32_t> TrainingPlan::cp_group(int stage) const {
  std::vector<std::uint32_t> g;
  for (int c = 0; c < par().cp; ++c) g.push_back(rank(0, c, 0, stage));
  return g;
}

}  // namespace exasim::workloads
