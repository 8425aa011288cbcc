// Reads a scenario's `serving:` section into a ServingConfig (DESIGN.md "Scenario YAML").
#include <string>

#include "hw/error.hpp"
#include "workloads/model/model_config.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/serving/batch_scheduler.hpp"
#include "workloads/serving/router.hpp"

namespace exasim::workloads {

namespace {

using config::Node;
using serving::PoolConfig;
using serving::PoolRole;
using serving::ServingConfig;

// Host time per iteration that the GPU does not overlap (scheduling, input preparation, sampling,
// output processing). Stated default: 1 ms, the order of a Python-scheduled engine's step with
// CUDA graphs (vLLM v0.6.0 release notes: multi-step scheduling and asynchronous output processing
// brought the per-step host time of Llama 3 8B on H100 from several ms down to about one);
// C++ runtimes with overlapped scheduling (TensorRT-LLM) are lower. Calibrate with `cpu_overhead`.
constexpr double kDefaultCpuOverheadS = 1e-3;

int positive(const Node& n) { return n.as_positive_count(); }

DType read_dtype(const Node& n, std::initializer_list<std::string_view> choices) {
  return *dtype_from_name(n.as_choice(choices));
}

serving::ReplicaParallelism read_parallelism(const Node& n, const ModelSpec& model, const topologies::Cluster& cluster) {
  serving::ReplicaParallelism p;
  if (!n.defined()) return p;
  n.check_keys({"tp", "pp", "ep"});
  if (n.has("tp")) p.tp = positive(n["tp"]);
  if (n.has("pp")) p.pp = positive(n["pp"]);
  if (n.has("ep")) p.ep = positive(n["ep"]);
  if (p.tp > model.heads) n["tp"].fail("tp " + std::to_string(p.tp) + " exceeds the model's " + std::to_string(model.heads) + " heads");
  if (model.heads % p.tp != 0) n["tp"].fail("tp must divide the model's " + std::to_string(model.heads) + " attention heads");
  if (p.pp > model.layers) n["pp"].fail("pp exceeds the model's " + std::to_string(model.layers) + " layers");
  if (p.ep > 1) {
    if (!model.moe) n["ep"].fail("expert parallelism needs a mixture-of-experts model", "remove ep or use ep: 1");
    if (p.tp % p.ep != 0) n["ep"].fail("ep must divide tp (experts are spread over the replica's TP GPUs)");
    if (model.moe->experts % p.ep != 0) n["ep"].fail("ep must divide the model's " + std::to_string(model.moe->experts) + " experts");
  }
  if (p.tp > cluster.gpus_per_node && p.tp % cluster.gpus_per_node != 0)
    n["tp"].fail("tp larger than a node must be a multiple of gpus_per_node (" + std::to_string(cluster.gpus_per_node) + ")");
  return p;
}

double host_bandwidth(const hw::Catalog& catalog, const hw::GpuSpec& gpu, const Node& where) {
  if (gpu.pcie.empty()) return 0;
  return catalog.link(config::load_string(gpu.pcie, where.file())).bandwidth;
}

PoolConfig base_pool(const Node& n, const hw::Catalog& catalog, const topologies::Cluster& cluster, const ModelSpec& model,
                     const models::KernelParams& kernel) {
  PoolConfig p;
  p.parallelism = read_parallelism(n["parallelism"], model, cluster);
  p.gpu = cluster.gpu;
  p.kernel = kernel;
  p.host_bandwidth = host_bandwidth(catalog, p.gpu, n);
  return p;
}

// disaggregation: {prefill_replicas, decode_replicas} or {prefill: {replicas, parallelism, gpu},
// decode: {...}}; a pool's parallelism and GPU default to the section's.
void read_disaggregation(const Node& n, const PoolConfig& base, ServingConfig& c, const hw::Catalog& catalog,
                         const topologies::Cluster& cluster, const ModelSpec& model) {
  n.check_keys({"prefill_replicas", "decode_replicas", "prefill", "decode"});
  for (const auto role : {PoolRole::kPrefill, PoolRole::kDecode}) {
    const std::string name = serving::pool_role_name(role);
    PoolConfig p = base;
    p.role = role;
    const Node pool = n[name];
    if (pool.defined()) {
      pool.check_keys({"replicas", "parallelism", "gpu"});
      if (n.has(name + "_replicas")) n[name + "_replicas"].fail("give the replicas in " + name + ": or " + name + "_replicas, not both");
      p.replicas = positive(pool.required("replicas"));
      if (pool.has("parallelism")) p.parallelism = read_parallelism(pool["parallelism"], model, cluster);
      if (pool.has("gpu")) {  // heterogeneous pools: its own GPU type and that GPU's kernel defaults
        p.gpu = catalog.gpu(pool["gpu"]);
        if (p.gpu.name != cluster.gpu.name) p.kernel = models::KernelParams::defaults_for(p.gpu);
        p.host_bandwidth = host_bandwidth(catalog, p.gpu, pool);
      }
    } else {
      p.replicas = positive(n.required(name + "_replicas"));
    }
    c.pools.push_back(p);
  }
}

void read_slo(const Node& n, serving::SloConfig& slo) {
  n.check_keys({"ttft", "tpot", "attainment"});
  if (n.has("ttft")) slo.ttft_s = n["ttft"].as_positive_quantity(units::Dimension::kTime);
  if (n.has("tpot")) slo.tpot_s = n["tpot"].as_positive_quantity(units::Dimension::kTime);
  if (n.has("attainment")) slo.attainment = n["attainment"].as_fraction();
}

serving::SpeculativeConfig read_speculative(const Node& n, const hw::Catalog& catalog, const std::string& base_dir) {
  n.check_keys({"draft", "tokens", "acceptance"});
  serving::SpeculativeConfig s;
  s.draft = resolve_model(n.required("draft"), catalog, base_dir);
  if (n.has("tokens")) s.tokens = positive(n["tokens"]);
  if (n.has("acceptance")) s.acceptance = n["acceptance"].as_fraction();
  return s;
}

template <class Info>
std::string read_named(const Node& n, const Info* (*find)(std::string_view), const std::string& names) {
  const std::string v = n.as_string();
  if (!find(v)) n.fail("unknown " + std::string(n.path().substr(n.path().rfind('.') + 1)) + " \"" + v + "\"", "use " + names);
  return v;
}

void read_engine(const Node& n, ServingConfig& c) {
  if (n.has("scheduler")) c.scheduler = read_named(n["scheduler"], serving::find_batch_scheduler, serving::batch_scheduler_names());
  if (n.has("router")) c.router = read_named(n["router"], serving::find_router, serving::router_names());
  if (n.has("max_batch_tokens")) c.max_batch_tokens = positive(n["max_batch_tokens"]);
  if (n.has("max_num_seqs")) c.max_num_seqs = positive(n["max_num_seqs"]);
  if (n.has("chunked_prefill")) c.chunked_prefill = n["chunked_prefill"].as_count();
  if (n.has("block_size")) c.block_tokens = positive(n["block_size"]);
  if (n.has("watermark")) c.watermark = n["watermark"].as_fraction();
  if (n.has("preemption"))
    c.preemption = n["preemption"].as_choice({"recompute", "swap"}) == "swap" ? serving::Preemption::kSwap : serving::Preemption::kRecompute;
  if (n.has("swap_space")) c.swap_space_bytes = n["swap_space"].as_nonnegative_quantity(units::Dimension::kBytes);
  if (n.has("prefix_caching")) c.prefix_caching = n["prefix_caching"].as_bool();
  if (n.has("gpu_memory_utilization")) {
    c.gpu_memory_utilization = n["gpu_memory_utilization"].as_fraction();
    if (c.gpu_memory_utilization <= 0) n["gpu_memory_utilization"].fail("must be above 0", "vLLM's default is 0.9");
  }
  if (n.has("kv_cache_free_memory_fraction")) {
    if (n.has("gpu_memory_utilization"))
      n["kv_cache_free_memory_fraction"].fail("gpu_memory_utilization is set as well",
                                              "keep one: vLLM's gpu_memory_utilization or TensorRT-LLM's free-memory fraction");
    c.kv_free_memory_fraction = n["kv_cache_free_memory_fraction"].as_fraction();
    if (c.kv_free_memory_fraction <= 0)
      n["kv_cache_free_memory_fraction"].fail("must be above 0", "TensorRT-LLM's default is 0.9");
  }
  if (n.has("decode_attention")) c.decode_attention_matrix = n["decode_attention"].as_choice({"vector", "matrix"}) == "matrix";
  if (n.has("sliding_window_kv")) c.sliding_window_kv_window = n["sliding_window_kv"].as_choice({"window", "full"}) == "window";
  if (n.has("moe_all_to_all")) {
    const std::string k = n["moe_all_to_all"].as_choice({"nccl", "deepep", "nvlink-two-sided"});
    using serving::MoeAllToAll;
    c.moe_all_to_all = k == "deepep"             ? MoeAllToAll::kDeepEp
                       : k == "nvlink-two-sided" ? MoeAllToAll::kNvlinkTwoSided
                                                 : MoeAllToAll::kNccl;
  }
  c.cpu_overhead_s = n.has("cpu_overhead") ? n["cpu_overhead"].as_nonnegative_quantity(units::Dimension::kTime)
                                           : kDefaultCpuOverheadS;
}

}  // namespace

ServingConfig read_serving(const Node& n, const hw::Catalog& catalog, const topologies::Cluster& cluster,
                           const ModelSpec& model, const models::KernelParams& cluster_kernel, const std::string& base_dir) {
  n.expect_map();
  n.check_keys({"replicas", "parallelism", "precision", "kv_cache_dtype", "scheduler", "max_batch_tokens", "max_num_seqs",
                "chunked_prefill", "block_size", "watermark", "preemption", "swap_space", "prefix_caching",
                "gpu_memory_utilization", "kv_cache_free_memory_fraction", "cpu_overhead", "decode_attention", "sliding_window_kv", "moe_all_to_all", "disaggregation", "router", "workload", "slo", "speculative"});
  ServingConfig c;
  c.base_dir = base_dir;
  if (n.has("precision")) c.precision = read_dtype(n["precision"], {"fp32", "fp16", "bf16", "fp8", "fp4", "int8"});
  const bool wide = c.precision == DType::kFp32 || c.precision == DType::kFp16 || c.precision == DType::kBf16;
  c.kv_dtype = wide ? c.precision : DType::kBf16;  // vLLM "auto": the activation dtype
  if (n.has("kv_cache_dtype")) c.kv_dtype = read_dtype(n["kv_cache_dtype"], {"fp32", "fp16", "bf16", "fp8", "int8"});
  read_engine(n, c);
  const PoolConfig base = base_pool(n, catalog, cluster, model, cluster_kernel);
  if (n["disaggregation"].defined()) {
    if (n.has("replicas")) n["replicas"].fail("with disaggregation the pools give the replicas", "remove replicas or disaggregation");
    read_disaggregation(n["disaggregation"], base, c, catalog, cluster, model);
  } else {
    PoolConfig p = base;
    p.replicas = n.has("replicas") ? positive(n["replicas"]) : std::max(1, cluster.gpu_count() / p.parallelism.gpus());
    c.pools.push_back(p);
  }
  if (c.gpus() > cluster.gpu_count()) {
    (n["disaggregation"].defined() ? n["disaggregation"] : n.has("replicas") ? n["replicas"] : n)
        .fail("the replicas need " + std::to_string(c.gpus()) + " GPUs, the cluster has " + std::to_string(cluster.gpu_count()),
              "lower replicas or tp, or add nodes");
  }
  if (n.has("slo")) read_slo(n["slo"], c.slo);
  if (n.has("speculative")) c.speculative = read_speculative(n["speculative"], catalog, base_dir);
  c.workload = n.required("workload");
  return c;
}

}  // namespace exasim::workloads
