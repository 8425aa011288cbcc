#pragma once
// What a serving deployment is (scenario `serving:`): pools of identical model replicas, how each
// replica batches and caches, the router in front of them, the workload and the latency SLO.
// Values are physical or software settings of the served engine; defaults name their source.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/config/node.hpp"
#include "hw/dtype.hpp"
#include "hw/gpu_spec.hpp"
#include "models/kernel/kernel_params.hpp"
#include "workloads/model/model_spec.hpp"

namespace exasim::workloads::serving {

// Parallelism inside one replica: tp x pp GPUs; ep experts groups among the tp GPUs (ep <= tp).
struct ReplicaParallelism {
  int tp = 1;
  int pp = 1;
  int ep = 1;
  int gpus() const { return tp * pp; }
};

enum class PoolRole { kMixed, kPrefill, kDecode };
const char* pool_role_name(PoolRole r);  // "mixed", "prefill", "decode"

// A group of identical replicas. Co-located serving has one mixed pool; disaggregated serving a
// prefill pool and a decode pool, possibly on different GPUs (heterogeneous pools).
struct PoolConfig {
  PoolRole role = PoolRole::kMixed;
  int replicas = 1;
  ReplicaParallelism parallelism;
  hw::GpuSpec gpu;
  models::KernelParams kernel;
  double host_bandwidth = 0;  // B/s GPU <-> host per direction (PCIe) for swap preemption
};

// Speculative decoding (Leviathan et al., ICML'23): a draft model proposes k tokens per step, the
// target verifies them in one pass; each proposal is accepted with probability `acceptance`.
struct SpeculativeConfig {
  ModelSpec draft;
  int tokens = 4;           // k proposed tokens per step
  double acceptance = 0.7;  // per-token acceptance rate alpha
  // Expected tokens a verification step emits: (1 - alpha^(k+1)) / (1 - alpha).
  double expected_tokens_per_step() const;
};

struct SloConfig {
  double ttft_s = 0;      // 0: no limit
  double tpot_s = 0;      // 0: no limit
  double attainment = 0.9;  // share of requests that must meet both for "the SLO is met" (DistServe: 90%)
};

enum class Preemption { kRecompute, kSwap };

// The kernel an MoE model's expert-parallel dispatch and combine run on (key `moe_all_to_all`):
// NCCL's all-to-all of equal buffers (vLLM's default); DeepEP (SGLang's and vLLM's
// --enable-deepep / all2all-backend deepep, mode auto: the normal kernel for iterations with
// prefill tokens, the low-latency one for decode-only iterations); TensorRT-LLM's NVLink
// two-sided all-to-all of NVL72 racks. The last two run on the node calibration's fitted
// constants (models/collective/expert_all_to_all.hpp) inside one NVLink domain.
enum class MoeAllToAll { kNccl, kDeepEp, kNvlinkTwoSided };
const char* moe_all_to_all_name(MoeAllToAll k);  // "nccl", "deepep", "nvlink-two-sided"

struct ServingConfig {
  std::vector<PoolConfig> pools;  // mixed; or prefill then decode
  DType precision = DType::kBf16;     // weights and GEMMs
  DType kv_dtype = DType::kBf16;      // KV cache (default: the precision, bf16 for fp4 weights)
  std::string scheduler = "vllm";     // batching scheduler (batch_scheduler.hpp table)
  int max_batch_tokens = 8192;        // tokens per iteration (vLLM max_num_batched_tokens)
  int max_num_seqs = 256;             // sequences per iteration (vLLM default 256)
  int chunked_prefill = 0;            // token budget of a chunked-prefill iteration; 0 = off
  int block_tokens = 16;              // paged-KV block size (vLLM default 16)
  double watermark = 0.01;            // free-block share kept back when admitting prefills (vLLM 0.01)
  Preemption preemption = Preemption::kRecompute;
  double swap_space_bytes = 4.0 * (1ull << 30);  // CPU swap space per GPU (vLLM swap_space 4 GiB)
  bool prefix_caching = false;
  double gpu_memory_utilization = 0.9;  // share of HBM the engine may use (vLLM default 0.9)
  // TensorRT-LLM's kv_cache_free_gpu_mem_fraction: the KV cache takes this share of the memory
  // still free after weights, activations and runtime are allocated (0: vLLM's
  // gpu_memory_utilization applies instead). Key `kv_cache_free_memory_fraction`.
  double kv_free_memory_fraction = 0;
  // Host time of one iteration that the GPU does not overlap (schedule, prepare inputs, sample,
  // detokenize). Calibratable; the default is stated in serving_reader.cpp with its source.
  double cpu_overhead_s = 0;
  // Decode attention kernel: false = CUDA-core paged attention (vLLM's paged_attention_v1/v2: each
  // query head's dot products on the vector units); true = tensor-core GQA decode (TensorRT-LLM
  // XQA / trtllm-gen, FlashInfer with tensor cores: a KV head's query group forms the rows of one
  // MMA per loaded K/V block). Key `decode_attention: vector | matrix`.
  bool decode_attention_matrix = false;
  // Sliding-window models: whether the KV cache frees a sliding layer's blocks once they leave its
  // window (true: vLLM >= 0.10's hybrid KV cache manager, TensorRT-LLM's variable sliding-window
  // cache) or keeps every layer's whole context (false: vLLM before). Key `sliding_window_kv:
  // window | full`.
  bool sliding_window_kv_window = true;
  MoeAllToAll moe_all_to_all = MoeAllToAll::kNccl;
  std::string router = "round-robin";   // router.hpp table
  std::optional<SpeculativeConfig> speculative;
  SloConfig slo;
  config::Node workload;  // handed to the request-source factory (traces/)
  std::string base_dir;   // the scenario's folder, for relative trace paths

  bool disaggregated() const { return pools.size() == 2; }
  int gpus() const;
};

}  // namespace exasim::workloads::serving
