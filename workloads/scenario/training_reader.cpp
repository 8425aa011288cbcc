#include <filesystem>
#include <string>

#include "hw/error.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/training/pipeline_schedule.hpp"

namespace exasim::workloads {

namespace {

using config::Node;

int positive(const Node& n) { return n.as_positive_count(); }

Parallelism read_parallelism(const Node& n, int cluster_gpus) {
  n.check_keys({"tp", "pp", "dp", "cp", "ep", "etp", "vpp", "sequence_parallel"});
  Parallelism p;
  if (n.has("tp")) p.tp = positive(n["tp"]);
  if (n.has("pp")) p.pp = positive(n["pp"]);
  if (n.has("cp")) p.cp = positive(n["cp"]);
  if (n.has("ep")) p.ep = positive(n["ep"]);
  if (n.has("etp")) p.etp = positive(n["etp"]);
  if (n.has("vpp")) p.vpp = positive(n["vpp"]);
  if (n.has("sequence_parallel")) p.sequence_parallel = n["sequence_parallel"].as_bool();
  if (n.has("dp")) {
    p.dp = positive(n["dp"]);
  } else {  // derived: the GPUs left after tp, pp and cp
    const int per_replica = p.tp * p.pp * p.cp;
    if (cluster_gpus % per_replica != 0) {
      n.fail("tp*pp*cp = " + std::to_string(per_replica) + " does not divide the cluster's " +
                 std::to_string(cluster_gpus) + " GPUs",
             "give dp, or change tp, pp or cp");
    }
    p.dp = cluster_gpus / per_replica;
  }
  return p;
}

std::string schedule_names() {
  std::string s;
  for (const auto& info : pipeline_schedules()) s += (s.empty() ? "" : " | ") + info.name;
  return s;
}

}  // namespace

TrainingConfig read_training(const Node& n, int cluster_gpus) {
  n.check_keys({"seq_len", "global_batch", "micro_batch", "precision", "parallelism", "pipeline_schedule", "zero",
                "recompute", "recompute_layers", "offload", "attention_kernel", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap", "cross_entropy", "moe_load_imbalance",
                "first_stage_layers", "last_stage_layers", "shard_group", "moe_routing_trace", "moe_capacity_factor",
                "moe_pad_to_capacity", "lora"});
  TrainingConfig c;
  c.seq_len = positive(n.required("seq_len"));
  c.global_batch = positive(n.required("global_batch"));
  if (n.has("micro_batch")) c.micro_batch = positive(n["micro_batch"]);
  if (n.has("precision")) {
    c.precision = *dtype_from_name(n["precision"].as_choice({"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"}));
  }
  c.parallelism = read_parallelism(n.has("parallelism") ? n["parallelism"] : config::load_string("{}", n.file()),
                                   cluster_gpus);
  if (n.has("pipeline_schedule")) {
    c.pipeline_schedule = n["pipeline_schedule"].as_choice({"gpipe", "1f1b", "interleaved", "zero-bubble", "zero-bubble-h2", "breadth-first"});
    if (!find_pipeline_schedule(c.pipeline_schedule))
      n["pipeline_schedule"].fail("schedule \"" + c.pipeline_schedule + "\" is not simulated yet", "use " + schedule_names());
  }
  if (n.has("zero")) {
    c.zero = n["zero"].as_count();
    if (c.zero > 3) n["zero"].fail("ZeRO stage must be 0, 1, 2 or 3 (3 is FSDP)");
  }
  if (n.has("shard_group")) c.shard_group = positive(n["shard_group"]);
  if (n.has("recompute")) {
    const std::string r = n["recompute"].as_choice({"none", "selective", "full"});
    c.recompute = r == "none" ? models::Recompute::kNone : r == "selective" ? models::Recompute::kSelective
                                                                            : models::Recompute::kFull;
  }
  if (n.has("recompute_layers")) {
    c.recompute_layers = positive(n["recompute_layers"]);
    if (c.recompute != models::Recompute::kFull)
      n["recompute_layers"].fail("recompute_layers applies to full recompute only",
                                 "add `recompute: full` (the first recompute_layers layers of each model chunk are "
                                 "recomputed, the others keep their activations), or remove recompute_layers");
  }
  if (n.has("offload")) c.offload = n["offload"].as_choice({"none", "optimizer-cpu", "params-cpu", "nvme"});
  if (n.has("attention_kernel")) {
    c.attention = n["attention_kernel"].as_choice({"flash", "unfused"}) == "flash" ? AttentionKernel::kFlash
                                                                                  : AttentionKernel::kUnfused;
  }
  if (n.has("overlap_grad_reduce")) c.overlap_grad_reduce = n["overlap_grad_reduce"].as_bool();
  if (n.has("tp_comm_overlap")) {
    // true | false, or `backward`: only Megatron-LM's asynchronous backward communication.
    const Node& v = n["tp_comm_overlap"];
    const std::string s = v.as_string();
    if (s == "backward") c.tp_backward_overlap = true;
    else if (s == "true" || s == "yes" || s == "on" || s == "false" || s == "no" || s == "off") c.tp_comm_overlap = v.as_bool();
    else v.fail("expected true, false or backward, got \"" + s + "\"",
                "true: every TP collective pipelined with its GEMM (Transformer Engine userbuffers); backward: only "
                "the backward pass's, beside the other GEMM (Megatron-LM's asynchronous TP communication)");
  }
  if (n.has("overlap_param_gather")) {
    c.overlap_param_gather = n["overlap_param_gather"].as_bool();
    if (c.overlap_param_gather && (c.zero < 1 || c.zero > 2))
      n["overlap_param_gather"].fail("overlapping the weights' all-gather needs ZeRO-1 or 2 (zero: " + std::to_string(c.zero) + ")",
                                     "set zero: 1 (Megatron-Core's distributed optimizer); ZeRO-3 gathers each layer before use already, DDP gathers nothing");
  }
  if (n.has("lora")) {
    const Node& l = n["lora"];
    l.check_keys({"rank", "targets"});
    LoraConfig lora;
    if (l.has("rank")) lora.rank = l["rank"].as_positive_count();
    if (l.has("targets")) {
      const Node& t = l["targets"];
      if (!t.is_sequence() || t.size() == 0)
        t.fail("expected a list of layers to adapt", "e.g. targets: [qkv] or [qkv, attn_out, mlp_up, mlp_down]");
      lora.qkv = false;
      for (std::size_t i = 0; i < t.size(); ++i) {
        const std::string name = t.at(i).as_choice({"qkv", "attn_out", "mlp_up", "mlp_down"});
        (name == "qkv" ? lora.qkv : name == "attn_out" ? lora.attn_out : name == "mlp_up" ? lora.mlp_up : lora.mlp_down) = true;
      }
    }
    c.lora = lora;  // the plan checks what it combines with (TrainingPlan)
  }
  if (n.has("cross_entropy")) c.fused_cross_entropy = n["cross_entropy"].as_choice({"fused", "unfused"}) == "fused";
  if (n.has("moe_load_imbalance")) {
    c.moe_load_imbalance = n["moe_load_imbalance"].as_number();
    if (!(c.moe_load_imbalance >= 1))
      n["moe_load_imbalance"].fail("the busiest expert rank's tokens over the mean cannot be below 1",
                                   "1 means balanced routing; measured runs report 1.1-1.5 without auxiliary losses");
  }
  if (n.has("moe_routing_trace")) {
    if (n.has("moe_load_imbalance"))
      n["moe_routing_trace"].fail("give moe_load_imbalance or moe_routing_trace, not both", "the trace sets each layer's imbalance");
    std::filesystem::path p = n["moe_routing_trace"].as_string();
    if (p.is_relative() && !std::filesystem::exists(p)) p = std::filesystem::path(n.file()).parent_path() / p;
    c.moe_routing = read_moe_routing(p.string());
  }
  if (n.has("moe_capacity_factor")) {
    c.moe_capacity_factor = n["moe_capacity_factor"].as_number();
    if (!(c.moe_capacity_factor > 0))
      n["moe_capacity_factor"].fail("the expert capacity factor must be > 0", "1.0-1.25 is usual (Switch Transformer); leave it out for dropless routing");
  }
  if (n.has("moe_pad_to_capacity")) {
    c.moe_pad_to_capacity = n["moe_pad_to_capacity"].as_bool();
    if (c.moe_pad_to_capacity && c.moe_capacity_factor <= 0)
      n["moe_pad_to_capacity"].fail("padding to capacity needs moe_capacity_factor", "give moe_capacity_factor");
  }
  if (n.has("first_stage_layers")) c.first_stage_layers = positive(n["first_stage_layers"]);
  if (n.has("last_stage_layers")) c.last_stage_layers = positive(n["last_stage_layers"]);
  if ((c.first_stage_layers > 0) != (c.last_stage_layers > 0))
    n.fail("give both first_stage_layers and last_stage_layers, or neither", "an uneven split sets the first and last virtual stage");
  return c;
}

}  // namespace exasim::workloads
