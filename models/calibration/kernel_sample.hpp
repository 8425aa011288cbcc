#pragma once
// One measured kernel time with the shape it ran on: what the kernel-model calibration fits to
// and what the accuracy reports compare against. Readers of measurement formats (Vidur op
// tables, exasim-bench profiles) produce these.
#include <cstddef>
#include <string>
#include <vector>

#include "hw/dtype.hpp"
#include "models/kernel/kernel_models.hpp"
#include "models/kernel/moe_experts_model.hpp"

namespace exasim::models {

// kAttentionPrefill: FlashAttention forward over `seq` query tokens per sequence (causal);
// kAttentionDecode: one query token per sequence over a KV cache of `context` tokens;
// kMoeExperts: a fused MoE op's routed experts on one rank (moe_experts_model.hpp).
enum class SampleKind { kGemm, kMemoryOp, kAttentionPrefill, kAttentionDecode, kMoeExperts };

// What a measured time covers. Kernel: the GPU's time of the kernel alone (CUDA-graph replays
// timed between events, nccl-tests; AIConfigurator's tables). Launch included: an op timed on
// its own through the framework, with the GPU waiting for the host's launch (PyTorch-timed,
// Vidur's profiles): the kernel plus KernelParams::host_launch_overhead_s.
enum class SampleTiming { kKernel, kLaunchIncluded };

// The clocks the measured kernels ran at. Power-limited: as the GPU runs them, its power
// controller lowering the clocks after KernelParams::power_window_s of compute-bound work
// (PyTorch-timed loops, Vidur's profiles). Burst: the benchmark never reached the power limit,
// so the table cannot tell it. AIConfigurator's tables: A100 bf16 GEMMs of 8192 x 10240 (or
// 16384) x 10240 (or 16384) hold 0.83-0.93 of peak from 0.5 to 16 ms, where Vidur's PyTorch-
// timed A100 GEMMs of the same shapes agree within 1-4% below 300 us and are 15-17% slower
// above (median over 287 shapes). Sustained: the board power sampled while it ran was at the
// GPU's power limit (clocks_from_power), so the whole kernel ran at the sustained clocks, as in
// a training step (KernelParams::sustained_load).
enum class SampleClocks { kPowerLimited, kBurst, kSustained };

struct KernelSample {
  SampleKind kind = SampleKind::kGemm;
  std::string op;      // what the source calls it: "attn_pre_proj", "mlp_act", "gemm", ...
  std::string source;  // the table or run it came from (e.g. the model "meta-llama_llama-2-7b-hf")
  int line = 0;        // where in the file, for messages
  DType dtype = DType::kBf16;
  GemmRecipe recipe = GemmRecipe::kDense;  // kGemm: how the operands are stored and scaled
  InputCast cast = InputCast::kNone;       // kGemm: the op casts its 16-bit input A first
  SampleTiming timing = SampleTiming::kLaunchIncluded;
  SampleClocks clocks = SampleClocks::kPowerLimited;
  double tokens = 0;   // token count of the row (0 when not a per-token table); used for buckets
  int tp = 1;          // tensor-parallel degree the shapes were split by
  int ep = 1;          // kMoeExperts: expert-parallel ranks the experts were spread over
  // kGemm: batch x [m,k]x[k,n]
  double m = 0, n = 0, k = 0, batch = 1;
  // kMemoryOp: `memory_op` over [rows, cols]
  MemoryOp memory_op = MemoryOp::kElementwise;
  double rows = 0, cols = 0;
  // kAttentionPrefill / kAttentionDecode: `batch` sequences, `heads` query and `kv_heads` key/value
  // heads of `head_dim`; a sliding `window` of keys per query (0: none). dtype: the prefill's
  // compute dtype, the decode's KV-cache dtype.
  double seq = 0, context = 0, heads = 0, kv_heads = 0, head_dim = 128, window = 0;
  DType cache_dtype = DType::kBf16;  // the KV cache's (prefill writes it)
  // Multi-head latent attention (kernels-aic's MLA tables): `heads` query heads of DeepSeek-V3's
  // geometry (mla_prefill_shape, mla_decode_shape); head_dim, kv_heads and window unused.
  bool mla = false;
  // kMoeExperts: the layer and the measured rank's load; dtype, recipe: the grouped GEMMs' format.
  MoeExpertsShape moe;
  double time_s = 0;   // measured (median of repeats)
  double power_w = 0;  // board power while it ran, where the table says (0: not measured)
  // kGemm, where the measurement says (exasim-bench profiles): the output tile and split-K the
  // library's heuristic chose; 0 = unknown.
  int library_tile_m = 0, library_tile_n = 0, library_split_k = 0;
};

// `p` at the clocks a sample ran at: a burst sample without the power limit, a sustained one under
// it from the start, a power-limited one as an isolated kernel runs (after the window).
KernelParams params_at(const KernelParams& p, SampleClocks clocks);

// Model-predicted time of a sample, through the tile-level models, at the sample's clocks.
double predict_sample(const hw::GpuSpec& gpu, const KernelParams& p, const KernelSample& s);

// A board power sampled within this fraction of the power limit is the limit itself: the power
// controller holds a capped GPU just under it (GB200 bf16 GEMMs of 0.1 ms or more: 80% of them
// at 1140-1190 W of 1200; B200 prefill attention at 950-1000 W of 1000).
inline constexpr double kAtPowerLimit = 0.95;

// Marks the samples whose measured board power (KernelSample::power_w) reached kAtPowerLimit of
// `power_limit_w` as sustained, whatever clocks their table was timed at; returns how many.
// Samples without a power reading keep their clocks.
std::size_t clocks_from_power(std::vector<KernelSample>& samples, double power_limit_w);

// The bytes a sample must move through HBM over its measured time, as a fraction of `gpu`'s HBM
// peak; 0 for kinds without such a floor. Decode attention: K and V of every cached token in its
// window, per KV head. GEMM: each operand read once (A in 16 bits where the op casts it or the
// weights are narrow, B in the dtype), the output not counted (a replayed kernel may overwrite
// it in L2 before it is written back). MoE layer: the up and down weights of each expert a token
// reaches, once.
double hbm_fraction(const hw::GpuSpec& gpu, const KernelSample& s);

// Leaves out the samples with hbm_fraction above 1, which no kernel that reads its operands from
// HBM does: the benchmark found them in cache. Decode: B200 / GB200 hold a third of the rows of
// 50 MB or more (up to 1.79x the peak), H100 none. GEMMs: L40S's table, whose replays keep
// operands up to its 96 MB L2 (7979 of 136320 rows, up to 2.4 TB/s on 864 GB/s GDDR6); the other
// five GPUs' tables 1-44 rows each. MoE layers: L40S 11463 rows (a rank's experts within its L2:
// 1 token of Mixtral's layer at TP 4, EP 2, one expert's 44 MB of bf16 weights in 42 us, 1.2x the
// peak), H100 1274, B200 531.
// What a model layer sees is cold operands (the layers between evict them), so these rows
// measure the cache, not the kernel the model prices.
struct FasterThanHbm {
  std::size_t decode = 0, gemm = 0, moe = 0;
};
FasterThanHbm drop_faster_than_hbm(const hw::GpuSpec& gpu, std::vector<KernelSample>& samples);

}  // namespace exasim::models
