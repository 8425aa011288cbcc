#include "workloads/planner/plan_space.hpp"

#include <algorithm>

#include "workloads/training/pipeline_schedule.hpp"

namespace exasim::workloads::planner {

namespace {

using config::Node;

bool is_auto(const Node& n) { return n.is_scalar() && n.as_string() == "auto"; }

// A value or a list of values; "auto" gives the empty list.
template <typename F>
void read_list(const Node& n, F&& read_one) {
  if (!n.defined() || is_auto(n)) return;
  if (!n.is_sequence()) {
    read_one(n);
    return;
  }
  if (n.size() == 0) n.fail("an empty list allows no plan", "leave the key out or write auto");
  for (std::size_t i = 0; i < n.size(); ++i) read_one(n.at(i));
}

std::vector<int> read_ints(const Node& n) {
  std::vector<int> out;
  read_list(n, [&](const Node& v) { out.push_back(v.as_positive_count()); });
  return out;
}


std::uint8_t schedule_index(const Node& v) {
  const std::string name = v.as_string();
  const auto& table = pipeline_schedules();
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].name == name) return static_cast<std::uint8_t>(i);
  std::string names;
  for (const auto& s : table) names += (names.empty() ? "" : ", ") + s.name;
  v.fail("schedule \"" + name + "\" is not simulated", "use " + names);
}

models::Recompute recompute_of(const Node& v) {
  const std::string r = v.as_choice({"none", "selective", "full", "block"});
  return r == "none" ? models::Recompute::kNone : r == "selective" ? models::Recompute::kSelective : models::Recompute::kFull;
}

template <typename T>
bool allowed(const std::vector<T>& list, T v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

constexpr int kMinTokensPerRank = 4096;  // cp: auto

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

}  // namespace

const std::vector<std::string>& offload_modes() {
  static const std::vector<std::string> modes = {"none", "optimizer-cpu", "params-cpu", "nvme"};
  return modes;
}

namespace {

// The index of an offload mode in offload_modes() (0, none, for a name that is not there).
std::uint8_t offload_index(const std::string& name) {
  const auto& modes = offload_modes();
  const auto it = std::find(modes.begin(), modes.end(), name);
  return static_cast<std::uint8_t>(it == modes.end() ? 0 : it - modes.begin());
}

}  // namespace

PlanSpace read_plan_space(const Node& n) {
  PlanSpace s;
  if (!n.defined()) return s;
  n.expect_map();
  n.check_keys({"tp", "pp", "dp", "cp", "ep", "etp", "vpp", "micro_batch", "schedule", "zero", "recompute", "offload",
                "sequence_parallel", "allow_tp_across_nodes", "uneven_split", "memory_margin"});
  s.tp = read_ints(n["tp"]);
  s.pp = read_ints(n["pp"]);
  s.dp = read_ints(n["dp"]);
  s.cp = read_ints(n["cp"]);
  s.ep = read_ints(n["ep"]);
  s.etp = read_ints(n["etp"]);
  s.vpp = read_ints(n["vpp"]);
  s.micro_batch = read_ints(n["micro_batch"]);
  read_list(n["zero"], [&](const Node& v) {
    const long long z = v.as_nonnegative_int();
    if (z > 3) v.fail("ZeRO stage must be 0, 1, 2 or 3");
    s.zero.push_back(static_cast<int>(z));
  });
  read_list(n["schedule"], [&](const Node& v) { s.schedule.push_back(schedule_index(v)); });
  if (n.has("recompute")) s.recompute_auto = s.block_recompute = false;
  read_list(n["recompute"], [&](const Node& v) {
    if (v.as_string() == "block") s.block_recompute = true;
    else s.recompute.push_back(recompute_of(v));
  });
  read_list(n["sequence_parallel"], [&](const Node& v) { s.sequence_parallel.push_back(v.as_bool()); });
  read_list(n["offload"], [&](const Node& v) {
    s.offload.push_back(offload_index(v.as_choice({"none", "optimizer-cpu", "params-cpu", "nvme"})));  // offload_modes()
  });
  if (n.has("allow_tp_across_nodes")) s.allow_tp_across_nodes = n["allow_tp_across_nodes"].as_bool();
  if (n.has("uneven_split")) s.uneven_split = n["uneven_split"].as_bool();
  if (n.has("memory_margin")) {
    s.memory_margin = n["memory_margin"].as_fraction();
    if (*s.memory_margin >= 1) n["memory_margin"].fail("a margin of the whole memory leaves no room", "use a fraction such as 0.1");
  }
  return s;
}

TrainingConfig candidate_config(const TrainingConfig& base, const Candidate& c) {
  TrainingConfig t = base;
  t.parallelism.tp = c.tp;
  t.parallelism.pp = c.pp;
  t.parallelism.dp = c.dp;
  t.parallelism.cp = c.cp;
  t.parallelism.ep = c.ep;
  t.parallelism.etp = c.etp;
  t.parallelism.vpp = c.vpp;
  t.parallelism.sequence_parallel = c.sequence_parallel;
  t.micro_batch = c.micro_batch;
  t.pipeline_schedule = pipeline_schedules()[c.schedule].name;
  t.zero = c.zero;
  t.recompute = c.recompute;
  t.recompute_layers = std::max(0, c.recompute_layers);
  t.offload = offload_modes()[c.offload];
  t.first_stage_layers = c.first_stage_layers;
  t.last_stage_layers = c.last_stage_layers;
  return t;
}

Candidate candidate_of(const TrainingConfig& t) {
  Candidate c;
  c.tp = t.parallelism.tp;
  c.pp = t.parallelism.pp;
  c.dp = t.parallelism.dp;
  c.cp = t.parallelism.cp;
  c.ep = t.parallelism.ep;
  c.etp = t.parallelism.etp;
  c.vpp = t.parallelism.vpp;
  c.micro_batch = t.micro_batch;
  const auto& table = pipeline_schedules();
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].name == t.pipeline_schedule) c.schedule = static_cast<std::uint8_t>(i);
  c.zero = static_cast<std::uint8_t>(t.zero);
  c.recompute = t.recompute;
  c.recompute_layers = t.recompute_layers;
  c.sequence_parallel = t.parallelism.sequence_parallel;
  c.first_stage_layers = t.first_stage_layers;
  c.last_stage_layers = t.last_stage_layers;
  c.offload = offload_index(t.offload);
  return c;
}

std::string describe(const Candidate& c) {
  const char* rec = c.recompute == models::Recompute::kNone ? "none" : c.recompute == models::Recompute::kSelective ? "selective" : "full";
  std::string s = "tp " + std::to_string(c.tp) + " pp " + std::to_string(c.pp) + " dp " + std::to_string(c.dp);
  if (c.cp > 1) s += " cp " + std::to_string(c.cp);
  if (c.ep > 1) s += " ep " + std::to_string(c.ep);
  if (c.etp > 1) s += " etp " + std::to_string(c.etp);
  if (c.vpp > 1) s += " vpp " + std::to_string(c.vpp);
  s += " mb " + std::to_string(c.micro_batch) + " " + pipeline_schedules()[c.schedule].name + " zero " + std::to_string(c.zero) +
       " rc " + rec;
  if (c.recompute_layers > 0) s += ":" + std::to_string(c.recompute_layers);
  if (c.sequence_parallel) s += " sp";
  if (c.first_stage_layers > 0) s += " split " + std::to_string(c.first_stage_layers) + "/" + std::to_string(c.last_stage_layers);
  if (c.offload > 0) s += " offload " + offload_modes()[c.offload];
  return s;
}

std::optional<std::pair<int, int>> uneven_split(int layers, int stages) {
  if (stages < 3 || layers < stages) return std::nullopt;
  const int middle = (layers + stages - 1) / stages;
  const int rest = layers - (stages - 2) * middle;
  if (rest < 2) return std::nullopt;
  return std::make_pair(rest - rest / 2, rest / 2);
}

namespace {

struct Enumerator {
  const PlanSpace& space;
  const ModelSpec& model;
  const TrainingConfig& base;
  std::vector<Candidate>& out;
  std::vector<std::uint8_t> offloads;  // the offload modes to walk

  // The inner dimensions of one (tp, pp, dp, schedule, vpp, split).
  void emit_inner(Candidate c) {
    const int per_replica = base.global_batch / c.dp;
    const bool interleaved = pipeline_schedules()[c.schedule].interleaved;
    const std::vector<int> zeros = space.zero.empty() ? std::vector<int>{0, 1, 2, 3} : space.zero;
    // (policy, recompute_layers): block recompute is full recompute with the layers left to the search.
    std::vector<std::pair<models::Recompute, int>> recomputes;
    if (space.recompute_auto)
      for (const auto r : {models::Recompute::kNone, models::Recompute::kSelective, models::Recompute::kFull}) recomputes.push_back({r, 0});
    for (const auto r : space.recompute) recomputes.push_back({r, 0});
    if (space.block_recompute) recomputes.push_back({models::Recompute::kFull, Candidate::kFewestThatFit});
    std::vector<bool> sps = space.sequence_parallel.empty() ? std::vector<bool>{false, true} : space.sequence_parallel;
    if (c.tp == 1) sps = {false};
    for (const int mb : divisors(per_replica)) {
      if (!allowed(space.micro_batch, mb)) continue;
      if (interleaved && c.pp > 1 && (per_replica / mb) % c.pp != 0) continue;
      c.micro_batch = mb;
      for (std::size_t z = 0; z < zeros.size(); ++z) {
        if (c.dp * c.cp == 1 && z > 0) break;  // sharding over one replica changes nothing
        c.zero = static_cast<std::uint8_t>(zeros[z]);
        for (const auto& [r, layers] : recomputes) {
          c.recompute = r;
          c.recompute_layers = layers;
          for (std::size_t k = 0; k < sps.size(); ++k) {
            if (c.tp == 1 && k > 0) break;
            c.sequence_parallel = sps[k];
            for (const std::uint8_t o : offloads) {
              if (o >= 2 && c.zero < 3) continue;  // ZeRO-Infinity's parameter offload shards them (zero 3)
              c.offload = o;
              out.push_back(c);
            }
          }
        }
      }
    }
  }

  void emit_schedules(Candidate c) {
    const auto& table = pipeline_schedules();
    std::vector<std::uint8_t> schedules = space.schedule;
    if (schedules.empty())
      for (std::size_t i = 0; i < table.size(); ++i) schedules.push_back(static_cast<std::uint8_t>(i));
    // pp = 1: every non-interleaved schedule takes the same time, but GPipe holds every
    // micro-batch's activations where the others hold one: one plan, under 1F1B when allowed.
    std::optional<std::uint8_t> flat;
    for (const std::uint8_t s : schedules)
      if (!table[s].interleaved && (!flat || table[s].name == "1f1b")) flat = s;
    for (const std::uint8_t s : schedules) {
      c.schedule = s;
      if (!table[s].interleaved) {
        if (c.pp == 1 && s != *flat) continue;
        if (allowed(space.vpp, 1)) emit_split(c, 1);
        continue;
      }
      if (c.pp == 1) continue;
      for (int v = 2; c.pp * v <= model.layers; ++v)
        if (allowed(space.vpp, v)) emit_split(c, v);
      if (!space.vpp.empty() && allowed(space.vpp, 1)) emit_split(c, 1);
    }
  }

  void emit_split(Candidate c, int vpp) {
    c.vpp = vpp;
    const int stages = c.pp * vpp;
    c.first_stage_layers = c.last_stage_layers = 0;
    if (model.layers % stages != 0) {
      if (!space.uneven_split) return;
      const auto split = uneven_split(model.layers, stages);
      if (!split) return;
      c.first_stage_layers = split->first;
      c.last_stage_layers = split->second;
    }
    emit_inner(c);
  }
};

}  // namespace

std::vector<Candidate> enumerate_candidates(const PlanSpace& space, const ModelSpec& model, const TrainingConfig& base,
                                            const topologies::Cluster& cluster) {
  std::vector<Candidate> out;
  const int gpus = cluster.gpu_count();
  Enumerator e{space, model, base, out, space.offload};
  if (e.offloads.empty()) {  // auto: what the cluster's host side can run
    e.offloads = {0};
    const auto& host = cluster.host;
    if (host && host->pcie_bandwidth > 0 && !model.moe && !base.lora) {
      e.offloads.push_back(1);
      e.offloads.push_back(2);
      if (host->nvme_read > 0 && host->nvme_write > 0) e.offloads.push_back(3);
    }
  }
  for (int tp = 1; tp <= gpus; ++tp) {
    if (gpus % tp != 0 || !allowed(space.tp, tp)) continue;
    if (space.tp.empty() && (model.heads % tp != 0 || model.ffn % tp != 0)) continue;
    if (space.tp.empty() && !space.allow_tp_across_nodes && tp > cluster.gpus_per_node) continue;
    for (int pp = 1; pp <= model.layers && tp * pp <= gpus; ++pp) {
      if (gpus % (tp * pp) != 0 || !allowed(space.pp, pp)) continue;
      for (const int cp : divisors(gpus / (tp * pp))) {
        if (!allowed(space.cp, cp)) continue;
        if (cp > 1) {
          // Ring attention (Megatron's load-balanced split into 2 cp chunks); auto keeps at
          // least kMinTokensPerRank of a sequence on each GPU, where the ring's steps still
          // hide behind the attention they overlap.
          if (base.seq_len % (2 * cp) != 0 || base.attention != AttentionKernel::kFlash || model.sliding_window > 0) continue;
          if (space.cp.empty() && base.seq_len / cp < kMinTokensPerRank) continue;
        }
        Candidate c;
        c.tp = tp;
        c.pp = pp;
        c.cp = cp;
        c.dp = gpus / (tp * pp * cp);
        if (!allowed(space.dp, c.dp) || base.global_batch % c.dp != 0) continue;
        // Expert parallelism (Megatron-Core's MoE parallel folding): ep x etp of the tp x cp x dp
        // GPUs that share a stage's dense weights hold experts / ep experts, each split over etp.
        // Auto etp: whole experts (1) or split as the dense layers are (tp, Megatron's default).
        const int experts = model.moe ? model.moe->experts : 1;
        const int expert_ffn = model.moe ? static_cast<int>(model.moe->expert_ffn > 0 ? model.moe->expert_ffn : model.ffn) : 1;
        std::vector<int> etps = space.etp;
        if (etps.empty()) etps = model.moe && tp > 1 ? std::vector<int>{1, tp} : std::vector<int>{1};
        for (const int ep : divisors(experts)) {
          if (!allowed(space.ep, ep)) continue;
          for (const int etp : etps) {
            if ((tp * cp * c.dp) % (ep * etp) != 0 || expert_ffn % etp != 0 || (etp > 1 && !model.moe)) continue;
            c.ep = ep;
            c.etp = etp;
            e.emit_schedules(c);
          }
        }
      }
    }
  }
  return out;
}

}  // namespace exasim::workloads::planner
