// `exasim kernel --gpu G --op OP [shape] [--dtype D] [--calibration F] [--json]`: one kernel's
// predicted time, bound, achieved FLOP/s and bytes/s from the tile-level models.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "apps/cli/commands.hpp"
#include "hw/config/json_text.hpp"
#include "apps/cli/table.hpp"
#include "hw/catalog.hpp"
#include "hw/error.hpp"
#include "hw/units.hpp"
#include "models/calibration/calibration_file.hpp"
#include "models/calibration/default_calibration.hpp"
#include "models/kernel/attention_model.hpp"
#include "models/kernel/gemm_model.hpp"
#include "models/kernel/kernel_models.hpp"
#include "models/kernel/moe_experts_model.hpp"

namespace exasim::cli {

namespace {

using units::Dimension;

struct KernelOptions {
  std::string gpu, op = "gemm", dtype = "bf16", calibration;
  bool dtype_given = false;
  std::string recipe;  // gemm: a GemmFormat name, or a recipe or cast name with --dtype (empty: none)
  std::string clocks = "power-limited";  // power-limited | burst | sustained (kernel_params.hpp power limit)
  double m = 0, n = 0, k = 0, batch = 1;
  double seq = 0, context = 0, heads = 0, kv_heads = 0, head_dim = 128, block = 16;
  bool no_causal = false;
  double window = 0;
  // attention_decode: matrix = TensorRT-LLM's kernels (what the kernel tables measured), vector =
  // CUDA-core paged attention (vLLM's); serving's `decode_attention` key names the same choice.
  std::string decode_attention = "matrix";
  models::MlaDims mla;  // mla_prefill, mla_decode: DeepSeek-V3's unless given
  double rows = 0, cols = 0, params = 0;
  // moe: the layer, its split over ranks, and the routing
  double tokens = 0, hidden = 0, ffn = 0, experts = 0, top_k = 0;
  int ep = 1, moe_tp = 1;
  std::string routing = "balanced";
  bool no_gated = false;
  bool json = false;
};

struct Answer {
  models::KernelCost cost;
  nlohmann::json detail = nlohmann::json::object();
};

[[noreturn]] void bad(const std::string& option, const std::string& what, const std::string& hint) {
  throw ConfigError(what, {"<command line>", 0, option}, hint);
}

void need(double v, const std::string& option, const std::string& op) {
  if (!(v > 0) || !std::isfinite(v)) bad(option, op + " needs " + option + " > 0", "e.g. " + option + " 4096");
}

// The GEMM op --recipe asks for: a format by its table name (its own dtype; --dtype, if given,
// must agree), or a recipe or cast name applied to --dtype; without --recipe, a bare GEMM.
models::GemmFormat gemm_format_of(const KernelOptions& o, DType t) {
  if (o.recipe.empty()) return {"", t, models::GemmRecipe::kDense, models::InputCast::kNone};
  const models::GemmFormat* f = models::find_gemm_format(o.recipe, t);
  if (!f) {
    std::string known;
    for (const models::GemmFormat& g : models::gemm_formats()) known += std::string(known.empty() ? "" : ", ") + std::string(g.name);
    bad("--recipe", "no GEMM format \"" + o.recipe + "\" for " + o.dtype + " operands",
        "give one of " + known + ", or per_tensor, static, per_group, block_scaled, weight_only with a --dtype that has it");
  }
  if (o.dtype_given && f->dtype != t)
    bad("--dtype", "--recipe " + o.recipe + " runs " + std::string(dtype_name(f->dtype)) + " operands, not " + o.dtype,
        "drop --dtype, or give a recipe of " + o.dtype);
  return *f;
}

Answer run_gemm(const hw::GpuSpec& g, const models::KernelParams& p, DType t, const KernelOptions& o) {
  need(o.m, "--m", "gemm"), need(o.n, "--n", "gemm"), need(o.k, "--k", "gemm"), need(o.batch, "--batch", "gemm");
  const models::GemmFormat f = gemm_format_of(o, t);
  const models::GemmPlan plan = models::gemm_plan(g, p, f.dtype, o.m, o.n, o.k, o.batch, f.recipe);
  Answer a{models::gemm_op(g, p, f, o.m, o.n, o.k, o.batch)};
  a.detail = {{"tile", std::to_string(plan.tile.bm) + "x" + std::to_string(plan.tile.bn)},
              {"split_k", plan.split_k},
              {"ctas", plan.tiles},
              {"waves", plan.waves}};
  if (!o.recipe.empty()) {
    a.detail["recipe"] = std::string(models::gemm_recipe_name(f.recipe));
    a.detail["input_cast"] = std::string(models::input_cast_name(f.cast));
    a.detail["gemm_s"] = plan.cost.time_s;
    a.detail["input_cast_s"] = a.cost.time_s - plan.cost.time_s;
  }
  return a;
}

double window_of(const KernelOptions& o) {
  if (o.window < 0) bad("--window", "--window must be at least 1 key (0: no window)", "e.g. --window 4096");
  return o.window;
}

// Grouped-query attention: each key/value head serves a whole group of query heads.
void check_kv_heads(const KernelOptions& o) {
  if (o.kv_heads == 0) return;  // default: one per query head
  if (!(o.kv_heads > 0) || o.kv_heads > o.heads || std::fmod(o.heads, o.kv_heads) != 0)
    bad("--kv-heads", "--kv-heads must divide --heads (" + std::to_string(static_cast<long long>(o.heads)) + ")",
        "e.g. --kv-heads 8 for 64 query heads, or omit it for multi-head attention");
}

models::AttentionShape attention_shape(const KernelOptions& o, const std::string& op) {
  need(o.seq, "--seq", op), need(o.heads, "--heads", op), need(o.head_dim, "--head-dim", op), need(o.batch, "--batch", op);
  check_kv_heads(o);
  models::AttentionShape s;
  s.batch = o.batch, s.seq_q = o.seq, s.seq_kv = o.context > 0 ? o.context : o.seq;
  s.heads = o.heads, s.kv_heads = o.kv_heads, s.head_dim = o.head_dim, s.causal = !o.no_causal;
  if (s.seq_kv < s.seq_q) bad("--context", "--context (keys) must be at least --seq (queries)", "omit it for self-attention");
  if (window_of(o) > 0 && o.no_causal) bad("--window", "a sliding window is causal: it cannot go with --no-causal", "drop one of them");
  s.window = o.window;
  return s;
}

// One MoE layer's routed experts on one expert-parallel rank (moe_experts_model.hpp).
Answer run_moe(const hw::GpuSpec& g, const models::KernelParams& p, DType t, const KernelOptions& o) {
  const std::string op = "moe";
  need(o.tokens, "--tokens", op), need(o.hidden, "--hidden", op), need(o.ffn, "--ffn", op);
  need(o.experts, "--experts", op), need(o.top_k, "--top-k", op);
  const auto whole = [](double v) { return v == std::floor(v); };
  if (!whole(o.experts) || o.experts > models::kMaxExperts)
    bad("--experts", "--experts must be a whole number <= " + std::to_string(models::kMaxExperts),
        "MoE models route over 8-384 experts, e.g. --experts 256");
  if (!whole(o.top_k) || o.top_k > o.experts)
    bad("--top-k", "--top-k and --experts must be whole numbers with top-k <= experts", "e.g. --experts 8 --top-k 2");
  // One kernel call indexes its token rows with 32-bit integers.
  if (o.tokens > 2147483647.0) bad("--tokens", "--tokens above 2^31 - 1 for one MoE call", "e.g. --tokens 4096");
  if (o.ep < 1 || std::fmod(o.experts, o.ep) != 0)
    bad("--ep", "--ep must divide --experts (" + std::to_string(static_cast<long long>(o.experts)) + ")",
        "expert parallelism gives every rank the same number of experts");
  if (o.moe_tp < 1 || std::fmod(o.ffn, o.moe_tp) != 0)
    bad("--moe-tp", "--moe-tp must divide --ffn", "each expert's FFN is split evenly over --moe-tp ranks");
  const auto routing = models::parse_expert_routing(o.routing);
  if (!routing) bad("--routing", "unknown routing \"" + o.routing + "\"", "balanced, uniform or power_law_A (e.g. power_law_1.2)");
  models::MoeExpertsShape s;
  s.tokens = o.tokens, s.hidden = o.hidden, s.expert_ffn = o.ffn / o.moe_tp, s.top_k = o.top_k, s.experts = o.experts;
  s.gated = !o.no_gated;
  s.load = models::busiest_rank_experts(*routing, o.tokens, static_cast<int>(o.top_k), static_cast<int>(o.experts), o.ep);
  const models::MoeExpertsCost c = models::moe_experts_time(g, p, gemm_format_of(o, t), s);
  Answer a{c.total};
  a.detail = {{"routing", models::expert_routing_name(*routing)},
              {"active_experts", s.load.active_experts},
              {"routed_tokens", s.load.routed_tokens}};
  const std::pair<const char*, const models::KernelCost*> parts[] = {{"route_s", &c.route}, {"permute_s", &c.permute},
                                                                     {"up_s", &c.up},       {"act_s", &c.act},
                                                                     {"down_s", &c.down},   {"finalize_s", &c.finalize}};
  for (const auto& [name, k] : parts) a.detail[name] = k->time_s;
  return a;
}

Answer run_op(const hw::GpuSpec& g, const models::KernelParams& p, DType t, const KernelOptions& o) {
  const std::string& op = o.op;
  if (op == "gemm") return run_gemm(g, p, t, o);
  if (op == "moe") return run_moe(g, p, t, o);
  if (op == "attention_prefill") return {models::attention_prefill(g, p, t, attention_shape(o, op))};
  if (op == "attention_backward") return {models::attention_backward(g, p, t, attention_shape(o, op))};
  if (op == "attention_decode") {
    need(o.context, "--context", op), need(o.heads, "--heads", op), need(o.head_dim, "--head-dim", op);
    need(o.batch, "--batch", op);
    check_kv_heads(o);
    // A sliding-window layer reads only the window's latest KV tokens.
    const double context = window_of(o) > 0 ? std::min(o.context, o.window) : o.context;
    models::DecodeShape s{o.batch, context, o.heads, o.kv_heads, o.head_dim, o.block};
    s.kernels = o.decode_attention == "vector" ? models::DecodeKernels::kCudaCorePaged : models::DecodeKernels::kTensorRtLlm;
    Answer a{models::attention_decode(g, p, t, s)};
    const models::DecodeLaunch launch = models::decode_launch(g, p, s);
    a.detail = {{"kv_splits", launch.splits},
                {"decode_kernel", launch.grouped ? "grouped" : "per-head"},
                {"ctas", launch.ctas},
                {"decode_attention", o.decode_attention}};
    return a;
  }
  if (op == "mla_prefill" || op == "mla_decode") {
    need(o.heads, "--heads", op), need(o.batch, "--batch", op);
    for (const auto& [v, name] : {std::pair{o.mla.nope, "--mla-nope"}, {o.mla.rope, "--mla-rope"},
                                  {o.mla.v, "--mla-v"}, {o.mla.kv_lora, "--mla-kv-lora"}})
      need(v, name, op);
    if (op == "mla_prefill") {
      need(o.seq, "--seq", op);
      models::AttentionShape s = models::mla_prefill_shape(o.batch, o.seq, o.heads, o.mla);
      s.seq_kv = o.context;  // chunked prefill: the keys before and in the chunk (0: the chunk)
      return {models::mla_prefill(g, p, t, s)};
    }
    need(o.context, "--context", op);
    const models::DecodeShape s = models::mla_decode_shape(o.batch, o.context, o.heads, o.mla);
    Answer a{models::mla_decode(g, p, t, s)};
    const models::DecodeLaunch launch = models::mla_decode_launch(g, p, s);
    a.detail = {{"kv_splits", launch.splits}, {"ctas", launch.ctas}, {"latent_row", s.head_dim}};
    return a;
  }
  if (op == "adam") {
    need(o.params, "--params", op);
    return {models::memory_op(g, p, models::MemoryOp::kAdam, t, o.params, 1)};
  }
  const auto mop = models::memory_op_from_name(op);
  if (!mop) {
    bad("--op", "unknown kernel \"" + op + "\"",
        "use gemm, moe, attention_prefill, attention_backward, attention_decode, mla_prefill, mla_decode, elementwise, residual_add, silu_mul, gelu, "
        "rmsnorm, layernorm, softmax, rope, embedding, adam (or a *_backward memory op)");
  }
  need(o.rows, "--rows", op), need(o.cols, "--cols", op);
  return {models::memory_op(g, p, *mop, t, o.rows, o.cols)};
}

int run(const Context& ctx, const KernelOptions& o) {
  const hw::Catalog catalog = hw::Catalog::load(ctx.configs_dir);
  if (!catalog.contains(hw::CatalogKind::kGpu, o.gpu))
    bad("--gpu", "unknown GPU \"" + o.gpu + "\"", "see `exasim hw list --kind gpu`");
  const hw::GpuSpec gpu = catalog.gpu(o.gpu);
  const auto dtype = dtype_from_name(o.dtype);
  if (!dtype) bad("--dtype", "unknown data type \"" + o.dtype + "\"", "use fp32, tf32, fp16, bf16, fp8, fp4 or int8");
  models::Calibration cal;
  cal.kernel = models::KernelParams::defaults_for(gpu);
  // The GPU's own calibration unless a file or "none" (datasheet + family defaults) is given.
  const std::string file = models::calibration_file_for(o.calibration, ctx.configs_dir, models::CalibrationFor::kGpu, gpu.name);
  if (!file.empty()) cal = models::load_calibration(cal, file);
  // The power limit: an isolated kernel drops to sustained clocks after its window; a short
  // benchmark replay never reaches it (burst); a training step holds it throughout (sustained).
  if (o.clocks == "burst") cal.kernel = cal.kernel.at_burst_clocks();
  if (o.clocks == "sustained") cal.kernel.sustained_load = true;
  const bool gemms = o.op == "gemm" || o.op == "moe";
  if (!o.recipe.empty() && !gemms) bad("--recipe", "--recipe applies to --op gemm and moe", "drop --recipe, or use --op gemm");
  // A table format names its own dtype (--recipe fp8_block: fp8 operands).
  const DType operands = gemms ? gemm_format_of(o, *dtype).dtype : *dtype;
  const std::string dtype_text = operands == *dtype ? o.dtype : std::string(dtype_name(operands));
  const Answer a = run_op(gpu, cal.kernel, operands, o);
  const models::KernelCost& c = a.cost;
  if (o.json) {
    nlohmann::json j = {{"gpu", gpu.name},
                        {"op", o.op},
                        {"dtype", dtype_text},
                        {"time_s", c.time_s},
                        {"bound", models::bound_name(c.bound)},
                        {"flops", c.flops},
                        {"bytes", c.bytes},
                        {"tflops", c.achieved_flops() / 1e12},
                        {"bytes_per_s", c.achieved_bytes_per_s()},
                        {"clocks", o.clocks},
                        {"kernel_parameters", cal.kernel.source}};
    for (auto& [key, v] : a.detail.items()) j[key] = v;
    std::cout << config::to_json_text(j, 2) << "\n";
    return 0;
  }
  Table t({"quantity", "value"});
  t.set_align_right(1);
  t.add_row({"time", units::format(c.time_s, Dimension::kTime, 4)});
  t.add_row({"bound", models::bound_name(c.bound)});
  t.add_row({"achieved", units::format(c.achieved_flops(), Dimension::kFlopRate, 4)});
  t.add_row({"memory traffic", units::format(c.achieved_bytes_per_s(), Dimension::kBandwidth, 4)});
  for (auto& [key, v] : a.detail.items()) {
    const bool time = key.size() > 2 && key.ends_with("_s") && v.is_number();
    t.add_row({key, v.is_string() ? v.get<std::string>()
                    : time         ? units::format(v.get<double>(), Dimension::kTime, 4)
                                   : v.dump()});
  }
  std::cout << "exasim: " << o.op << " on " << gpu.name << " (" << dtype_text << (o.recipe.empty() ? "" : ", " + o.recipe)
            << "); kernel parameters: " << cal.kernel.source
            << "\n";
  // Say how a dtype without matrix units here is modelled (gemm_model.cpp: weight-only kernels).
  if (!gpu.host_cpu && !gpu.supports(operands))
    std::cout << "note: " << gpu.name << " has no " << dtype_text
              << " matrix units; modelled as " << dtype_text << " operands converted to its 16-bit (or fp32) path\n";
  std::cout << "\n";
  t.print(std::cout);
  return 0;
}

}  // namespace

void add_kernel_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<KernelOptions>();
  CLI::App* cmd = app.add_subcommand("kernel", "predict one kernel's time, bound and achieved rates");
  cmd->add_option("--gpu", o->gpu, "catalog GPU (exasim hw list --kind gpu)")->required();
  cmd->add_option("--op", o->op,
                  "gemm | moe | attention_prefill | attention_backward | attention_decode | mla_prefill | mla_decode | "
                  "elementwise | residual_add | silu_mul | gelu | rmsnorm | layernorm | softmax | rope | embedding | adam");
  cmd->add_option("--dtype", o->dtype, "fp32 | tf32 | fp16 | bf16 | fp8 | fp4 | int8 (KV cache dtype for decode and MLA)");
  cmd->add_option("--recipe", o->recipe,
                  "gemm, moe: the op as a kernel table names it, input cast included (bfloat16, float16, fp8, fp8_static, "
                  "fp8_block, nvfp4, sq, int8_wo, int4_wo), or per_tensor | static | per_group | block_scaled | "
                  "weight_only for the --dtype operands (default: a bare GEMM)");
  cmd->add_option("--calibration", o->calibration,
                  "calibration YAML, or none for the datasheet + family defaults (default: the GPU's own, "
                  "configs/calibration/defaults.yaml; the family defaults where it lists none)");
  cmd->add_option("--clocks", o->clocks,
                  "power-limited: an isolated kernel, its clocks lowered after the power window (default); burst: "
                  "below the power limit throughout (short benchmark replays: AIConfigurator's tables); sustained: at "
                  "the limit throughout (kernels back to back, as in a training step)")
      ->check(CLI::IsMember({"power-limited", "burst", "sustained"}));
  cmd->add_option("--m", o->m, "gemm: rows of A and C");
  cmd->add_option("--n", o->n, "gemm: columns of B and C");
  cmd->add_option("--k", o->k, "gemm: inner dimension");
  cmd->add_option("--batch", o->batch, "gemm: independent products; attention: sequences");
  cmd->add_option("--seq", o->seq, "attention_prefill/backward: query tokens per sequence");
  cmd->add_option("--context", o->context, "attention_decode: KV tokens per sequence; prefill: keys (chunked prefill)");
  cmd->add_option("--heads", o->heads, "attention: query heads on this GPU");
  cmd->add_option("--kv-heads", o->kv_heads, "attention: key/value heads on this GPU (default: --heads)");
  cmd->add_option("--head-dim", o->head_dim, "attention: head dimension");
  cmd->add_option("--block-tokens", o->block, "attention_decode: paged-KV block size");
  cmd->add_option("--decode-attention", o->decode_attention,
                  "attention_decode: matrix = TensorRT-LLM's kernels, the GQA group on the matrix units (default; what "
                  "the kernel tables measured); vector = CUDA-core paged attention, every dot product on the vector "
                  "units (vLLM's; serving's decode_attention key)")
      ->check(CLI::IsMember({"matrix", "vector"}));
  cmd->add_option("--mla-nope", o->mla.nope, "mla_prefill/decode: Q/K head dims without rotary (qk_nope_head_dim)");
  cmd->add_option("--mla-rope", o->mla.rope, "mla_prefill/decode: rotary head dims (qk_rope_head_dim)");
  cmd->add_option("--mla-v", o->mla.v, "mla_prefill: V head dims (v_head_dim)");
  cmd->add_option("--mla-kv-lora", o->mla.kv_lora, "mla_decode: the latent's rank (kv_lora_rank)");
  cmd->add_flag("--no-causal", o->no_causal, "attention_prefill/backward: full (non-causal) attention");
  cmd->add_option("--window", o->window, "attention: sliding window, keys per query (0: none; decode reads min(context, window))");
  cmd->add_option("--rows", o->rows, "memory ops: rows (tokens)");
  cmd->add_option("--cols", o->cols, "memory ops: columns (hidden size)");
  cmd->add_option("--params", o->params, "adam: parameters updated");
  cmd->add_option("--tokens", o->tokens, "moe: tokens entering the layer on this GPU");
  cmd->add_option("--hidden", o->hidden, "moe: hidden size");
  cmd->add_option("--ffn", o->ffn, "moe: one expert's intermediate size (before --moe-tp)");
  cmd->add_option("--experts", o->experts, "moe: routed experts of the layer");
  cmd->add_option("--top-k", o->top_k, "moe: experts each token picks");
  cmd->add_option("--ep", o->ep, "moe: expert-parallel ranks (the experts are spread over them)");
  cmd->add_option("--moe-tp", o->moe_tp, "moe: ranks each expert's FFN is split over");
  cmd->add_option("--routing", o->routing,
                  "moe: balanced | uniform | power_law_A (the busiest rank of a power-law skew, as AIConfigurator draws it)");
  cmd->add_flag("--no-gated", o->no_gated, "moe: a plain activation (not SwiGLU)");
  cmd->add_flag("--json", o->json, "print JSON (time_s, bound, tflops, bytes_per_s, ...)");
  cmd->callback([&ctx, o, cmd] {
    o->dtype_given = cmd->count("--dtype") > 0;
    ctx.handler = [&ctx, o] { return run(ctx, *o); };
  });
}

}  // namespace exasim::cli
