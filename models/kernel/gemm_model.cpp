#include "models/kernel/gemm_model.hpp"

#include "models/cpu/cpu_kernels.hpp"

#include "models/kernel/kernel_models.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace exasim::models {

namespace {

// CUTLASS 2.x sm80 tensor-op defaults (cutlass/gemm/device/default_gemm_configuration.h and
// the cuBLAS "ampere_*gemm_<BM>x<BN>_*" kernel names) plus 16/32-row tiles for skinny GEMMs.
constexpr std::array<GemmTile, 8> kTiles = {{
    {256, 128, 8, 4, 3},
    {128, 256, 8, 2, 3},
    {128, 128, 4, 2, 4},
    {128, 64, 4, 2, 4},
    {64, 128, 4, 2, 4},
    {64, 64, 4, 2, 5},
    {32, 128, 4, 1, 5},
    {16, 128, 4, 1, 6},
}};

constexpr double kMinRowsOfTallTiles = 128;
// Hopper's wgmma takes any N that is a multiple of 8 (PTX ISA 8.0), and cuBLAS's sm90 kernels
// come in many tile widths, run with A and B swapped when that fits better, and share the work
// of a Stream-K launch evenly among the SMs. So a Stream-K GEMM on Hopper pays for its padding in
// such steps along one side, not in whole tiles: on H100 (kernels-aic) bf16 513 x 8192 x 8192
// takes 91.1 us against 89.8 at m = 512 (+1.5%; H200 +6.7%), where a whole fifth row of
// 128 x 256 tiles would cost +25%. Not on Blackwell: B200 pays +15.5% there, and the rule made
// its held-out error worse (14.5 -> 14.7%; GB200 13.7 -> 14.0%).
constexpr double kMmaNStep = 16;
constexpr double kMaxSplit = 16;
constexpr double kStageKBytes = 64;      // bytes of K per operand row per pipeline stage
constexpr double kRegsBase = 64;         // registers per thread besides the accumulators
constexpr double kMaxRegsPerThread = 255;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Matrix FLOP/s per SM for `t`. A dtype without a matrix path runs as a weight-only kernel on
// the 16-bit path (fp8/fp4 weights on Ampere: Marlin-style dequantize and bf16 MMA), or at the
// fp32 rate when there is no 16-bit path either.
double matrix_rate_per_sm(const hw::GpuSpec& gpu, DType t) {
  if (gpu.supports(t)) return gpu.matrix_flops_per_sm(t);
  const double half = std::max(gpu.peak(DType::kBf16), gpu.peak(DType::kFp16));
  return (half > 0 ? half : gpu.peak(DType::kFp32)) / gpu.sm_count;
}

// --- Blackwell / fp4 specifics (kept apart from the Ampere/Hopper paths above and below) ---
// NVFP4 (the fp4 format of Blackwell's tensor cores): e2m1 values plus one e4m3 scale per 16
// values along K, so an fp4 operand moves 0.5 + 1/16 = 0.5625 bytes per element (NVIDIA,
// "Introducing NVFP4 for efficient and accurate low-precision inference", 2025; PTX ISA
// tcgen05.mma block_scale, scale_vec::4X = one scale per 16 K elements).
double operand_bytes(DType dtype) { return dtype_bytes(dtype) + (dtype == DType::kFp4 ? 1.0 / 16 : 0.0); }
// Blackwell's tcgen05.mma reads both operands from shared memory through matrix descriptors
// and accumulates in tensor memory (PTX ISA 8.7, tcgen05; CUTLASS sm100 collective mainloops):
// there are no per-warp register fragments, so the Ampere ldmatrix traffic that the smem term
// counts does not exist, and the load/store path's 128 B/clk (32 banks x 4 B) is not the path
// the tensor cores read through (at that width a 128x128 bf16 tile could reach only half of
// B200's measured 1745 TFLOP/s MAMF). The main loop's rate is the measured MAMF (matrix term).
// Hopper's wgmma.mma_async likewise takes B (and here A) from shared memory through matrix
// descriptors (PTX ISA 8.0, wgmma; cuBLAS's sm90 kernels are warp-specialized TMA + wgmma
// pipelines): no ldmatrix fragments either. Measured (AIConfigurator, H100 bf16): 4096^3 runs
// at 763 TFLOP/s, where the Ampere smem term alone would cap a 128x256 tile at ~600.
bool mma_reads_shared_memory_directly(const hw::GpuSpec& gpu, const KernelParams& p) {
  return gpu.architecture == "blackwell" || (gpu.architecture == "hopper" && p.smem_operand_mma > 0);
}

// Blackwell's large-GEMM tiles: a CTA pair (cta_group::2) computes a 256-row tile, each SM
// holding 128 rows of A and half of B, so the pair reads BM + BN operand rows per K step for
// twice the outputs of a one-SM tile (CUTLASS sm100 2-SM UMMA 256x128 and 256x256 tiles; the
// cuBLAS sm100 "2sm" kernels). With fp4 and fp8 operands a one-SM 128x128 tile would need more
// L2 bandwidth per FLOP than the matrix rate leaves. Stages: CUTLASS fills the 228 KB of SMEM.
constexpr std::array<GemmTile, 2> kBlackwellPairTiles = {{
    {256, 256, 4, 1, 6, 2},
    {256, 128, 4, 1, 8, 2},
}};
// --- end of Blackwell / fp4 specifics ---

// --- recipes (gemm_recipe.hpp) ---
// Bytes per element of A (activations, m x k) and B (weights, k x n) as the kernel reads them,
// scales included, and of the element the MMA consumes (what shared memory feeds the warps).
struct OperandBytes {
  double a, b, mma, out;
};
OperandBytes operand_bytes(DType dtype, GemmRecipe recipe, bool narrow_output_16bit) {
  const double e = dtype_bytes(dtype);
  // 8- and 4-bit GEMMs write 16-bit results (Transformer Engine, TensorRT-LLM, DeepGEMM).
  const double out = e < 2 && narrow_output_16bit ? 2.0 : e;
  switch (recipe) {
    case GemmRecipe::kBlockScaled:  // one fp32 scale per 1 x 128 of A, per 128 x 128 of B
      return {e + 4.0 / 128, e + 4.0 / (128 * 128), e, out};
    case GemmRecipe::kWeightOnly:   // 16-bit A; B narrow, int4 with a 16-bit scale per 128 weights
      return {2.0, e + (e < 1 ? 2.0 / 128 : 0.0), 2.0, 2.0};
    case GemmRecipe::kDense: break;
  }
  return {operand_bytes(dtype), operand_bytes(dtype), e, out};
}
// Whether K may be shared among CTAs (split-K, Stream-K). Block-scaled kernels run one CTA per
// output tile over the whole of K: DeepGEMM (the kernels-aic fp8_block rows on B200 and GB200
// name it) promotes and scales each 128-K partial sum in registers and has no split-K. On H100
// a block-scaled 1 x 128 x 8192 GEMM takes 13.9 us against 7.7 us predicted with split-K 16.
// NVFP4 (fp4 values with an e4m3 scale per 16) runs TensorRT-LLM's CUTLASS block-scaled kernels,
// one CTA per output tile as well: kernels-aic B200, the nvfp4 rows where a split-K plan would be
// chosen (up to 512 rows) run 42-84% slower than it predicts, those with one CTA per tile 4-26%.
bool splits_k(DType dtype, GemmRecipe recipe) { return recipe != GemmRecipe::kBlockScaled && dtype != DType::kFp4; }
// --- end of recipes ---

// What stays the same for every candidate of one call (reciprocals: the planner calls this
// millions of times, and divisions dominate).
struct Problem {
  double m, n, k, batch, e;
  double ea, eb;      // operand bytes per element of A and B, scales included (fp4, recipes)
  bool smem_unbound;  // the MMA reads its operands from shared memory itself (Hopper, Blackwell)
  bool pair_tiles;    // CTA-pair tiles are candidates (Blackwell)
  bool stream_k;      // Stream-K scheduling is a candidate (Hopper, Blackwell: cuBLAS sm90+)
  bool split_k;       // split-K and Stream-K are candidates at all (splits_k)
  bool padding_in_n_steps;  // a Stream-K plan pads one side in kMmaNStep steps, not whole tiles (Hopper)
  bool cluster_multicast;  // two-CTA clusters share each B slice through TMA multicast (Hopper)
  double sms, inv_sms, inv_rate_sm, inv_smem_bw, inv_l2_bw, inv_hbm_bw, latency, l2_half, bk, inv_bk;
  double a, b, c;  // operand and result bytes of one product
  double launch, reduce_launch, tile_overhead;
  KernelParams::PowerLimit power_limit;
  const hw::GpuSpec* gpu;
};

// `matrix_efficiency`, `hbm_efficiency`: the kernel's rates (the dense library's, or the MoE
// kernels' own: grouped_gemm_time).
Problem make_problem(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n, double k,
                     double batch, GemmRecipe recipe, double matrix_efficiency, double hbm_efficiency) {
  Problem q;
  q.m = std::max(1.0, m), q.n = std::max(1.0, n), q.k = std::max(1.0, k), q.batch = std::max(1.0, batch);
  const OperandBytes ob = operand_bytes(dtype, recipe, p.narrow_output_16bit > 0);
  q.e = ob.mma;
  q.ea = ob.a, q.eb = ob.b;
  q.smem_unbound = mma_reads_shared_memory_directly(gpu, p);
  q.pair_tiles = gpu.architecture == "blackwell";
  q.split_k = splits_k(dtype, recipe);
  q.stream_k = q.split_k && p.stream_k > 0 && (gpu.architecture == "hopper" || gpu.architecture == "blackwell");
  q.cluster_multicast = gpu.architecture == "hopper";
  q.padding_in_n_steps = gpu.architecture == "hopper";
  q.sms = gpu.sm_count;
  q.inv_sms = 1 / q.sms;
  const DType mma = recipe == GemmRecipe::kWeightOnly ? DType::kBf16 : dtype;  // dequantized to 16 bits
  q.inv_rate_sm = 1 / (matrix_rate_per_sm(gpu, mma) * matrix_efficiency);
  q.inv_smem_bw = 1 / gpu.smem_bandwidth();
  q.inv_l2_bw = 1 / (gpu.l2_read_bandwidth() * p.l2_efficiency);
  q.inv_hbm_bw = 1 / (gpu.hbm_bandwidth * hbm_efficiency);
  q.latency = gpu.hbm_latency() * p.loaded_latency_factor;
  q.l2_half = gpu.l2_bytes / 2;  // an operand "fits" when it leaves room for the other streams
  q.bk = kStageKBytes / q.e;     // a power of two: the reciprocal is exact
  q.inv_bk = 1 / q.bk;
  q.a = q.m * q.k * q.ea, q.b = q.k * q.n * q.eb, q.c = q.m * q.n * ob.out;
  q.reduce_launch = p.launch_overhead_s;
  q.launch = p.launch_overhead_s + (recipe == GemmRecipe::kWeightOnly ? p.weight_only_overhead_s : 0.0);
  q.tile_overhead = p.tile_overhead_s;
  q.power_limit = p.power_limit();
  q.gpu = &gpu;
  return q;
}

// The dense GEMM library's kernel.
Problem make_problem(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n, double k,
                     double batch, GemmRecipe recipe) {
  return make_problem(gpu, p, dtype, m, n, k, batch, recipe, p.matrix_efficiency_for(dtype, recipe), p.hbm_efficiency);
}

double occupancy(const hw::GpuSpec& gpu, const GemmTile& t) {
  const double smem = t.stages * (t.bm + t.bn) * kStageKBytes / t.sms;  // a CTA pair splits A and B
  const double threads = 32.0 * t.warps;
  const double regs = std::min(kMaxRegsPerThread, t.bm * t.bn / t.sms / threads + kRegsBase) * threads;
  const double by_smem = std::floor(gpu.smem_per_sm_bytes / smem);
  const double by_regs = std::floor(gpu.registers() / regs);
  const double by_warps = std::floor(static_cast<double>(gpu.max_warps()) / t.warps);
  return std::min({static_cast<double>(gpu.max_ctas()), by_smem, by_regs, by_warps});
}

// What stays the same for every split-K factor of one tile.
struct TileSetup {
  const GemmTile* t;
  double occ, slots, inv_slots, tm, tn;
  double work_tiles;      // full tiles' worth of MMA work per product: tm x tn, less the padding a
                          // Stream-K kernel avoids (kMmaNStep)
  double mma_per_k;       // s per K element of one tile on its SM
  double smem_per_k;      // s per K element: tile fills plus every warp's fragment reads
  double l2_per_k;        // operand bytes per K element of one tile read from L2 (rows and columns present)
  double hbm_unsplit;     // A (re-read once per wave block that needs it), B, C
  double stream_per_k;    // s per K element for one CTA streaming at Little's-law rate
};

TileSetup setup(const Problem& q, const GemmTile& t, double occ) {
  TileSetup s;
  s.t = &t;
  s.occ = occ;
  s.slots = q.sms / t.sms * occ;
  s.inv_slots = 1 / s.slots;
  s.tm = std::ceil(q.m * (1.0 / t.bm)), s.tn = std::ceil(q.n * (1.0 / t.bn));  // tile sizes: powers of two
  s.work_tiles = s.tm * s.tn;
  if (q.stream_k && q.padding_in_n_steps) {  // one side of the tiles sized in MMA N steps (either side: A and B swap)
    const double m_steps = std::ceil(q.m * (1.0 / kMmaNStep)) * kMmaNStep, n_steps = std::ceil(q.n * (1.0 / kMmaNStep)) * kMmaNStep;
    s.work_tiles = std::min({s.work_tiles, m_steps / t.bm * s.tn, s.tm * n_steps / t.bn});
  }
  s.mma_per_k = 2.0 * t.bm * t.bn * q.inv_rate_sm / t.sms;  // per SM group (one SM, or a pair)
  const double warp_cols = static_cast<double>(t.warps) / t.warp_rows;
  s.smem_per_k = (t.warps * (t.bm / t.warp_rows + t.bn / warp_cols) + (t.bm + t.bn)) * q.e * q.inv_smem_bw;
  // Hopper: cuBLAS's sm90 kernels run as clusters of two CTAs along M ("cluster2x1x1" in their
  // names) whose tensor memory accelerator multicasts each B slice to both, so the pair reads it
  // from L2 once; each CTA still receives the whole slice (the streaming term below).
  const double delivered = std::min<double>(t.bm, q.m) * q.ea + std::min<double>(t.bn, q.n) * q.eb;
  const double b_share = q.cluster_multicast && s.tm >= 2 ? 0.5 : 1.0;
  s.l2_per_k = std::min<double>(t.bm, q.m) * q.ea + b_share * std::min<double>(t.bn, q.n) * q.eb;
  // A wave covers the squarest block of tiles (CUTLASS's swizzle): operands that do not fit in
  // L2 are read once per block of the other dimension.
  const double wave_tiles = std::min(s.tm * s.tn, s.slots);
  const double rows = std::min(s.tm, std::ceil(std::sqrt(wave_tiles)));
  const double cols = std::min(s.tn, std::ceil(wave_tiles / rows));
  const double a_reads = q.a <= q.l2_half ? 1 : std::ceil(s.tn / cols);
  const double b_reads = q.b <= q.l2_half ? 1 : std::ceil(s.tm / rows);
  s.hbm_unsplit = (q.a * a_reads + q.b * b_reads + q.c) * q.batch;
  // Little's law per CTA: (stages - 1) operand slices in flight over the loaded latency.
  s.stream_per_k = delivered * q.latency / ((t.stages - 1) * (t.bm + t.bn) * kStageKBytes);
  return s;
}

struct SplitCost {
  double time_s = kInf, tiles = 0, waves = 0;
  Bound bound = Bound::kLaunch;
};

// Split-K factor `split`, or (stream_k) Stream-K scheduling: persistent CTAs, one per slot, share
// the tiles' K iterations evenly, so no wave runs partly empty (Osama et al., "Stream-K",
// PPoPP'23; CUTLASS's sm90 stream-K tile scheduler, which cuBLAS's sm90/sm100 kernels use).
// Each CTA then holds at most one tile it shares with another: its fp32 partial tile goes
// through L2 to the tile's owner (the fix-up), one more prologue/epilogue round.
SplitCost with_split(const Problem& q, const TileSetup& s, int split, bool stream_k = false) {
  SplitCost r;
  const double k_split = split == 1 ? q.k : std::ceil(q.k / split);
  const double k_pad = std::ceil(k_split * q.inv_bk) * q.bk;
  r.tiles = s.tm * s.tn * q.batch * split;
  r.waves = std::ceil(r.tiles * s.inv_slots);
  // Round-robin: the busiest SM (pair) decides. Stream-K: every SM the same share, in whole K
  // iterations.
  const double per_sm_tiles = stream_k ? std::ceil(s.work_tiles * q.batch * s.t->sms * q.inv_sms * k_pad * q.inv_bk) * q.bk / k_pad
                                       : std::ceil(r.tiles * s.t->sms * q.inv_sms);
  const double partials = split > 1 ? split * q.m * q.n * 4 * q.batch : 0;  // fp32 partial sums written
  const double t_matrix = per_sm_tiles * k_pad * s.mma_per_k;
  const double t_smem = q.smem_unbound ? 0.0 : per_sm_tiles * k_pad * s.smem_per_k;
  const double fixup = stream_k ? 2.0 * std::min(r.tiles, s.slots) * s.t->bm * s.t->bn * 4 * q.inv_l2_bw : 0.0;
  const double t_l2 = (stream_k ? s.work_tiles * q.batch : r.tiles) * s.l2_per_k * k_split * q.inv_l2_bw + fixup;
  const double t_hbm = (s.hbm_unsplit + partials) * q.inv_hbm_bw;
  const double t_stream = std::max(1.0, per_sm_tiles / s.occ) * k_split * s.stream_per_k;
  double t = t_matrix;
  r.bound = Bound::kMatrix;
  if (t_smem > t) t = t_smem, r.bound = Bound::kSmemL2;
  if (t_l2 > t) t = t_l2, r.bound = Bound::kSmemL2;
  // On-chip work beyond the power window runs at the sustained clock (kernel_params.hpp).
  t = q.power_limit(t);
  if (t_hbm > t) t = t_hbm, r.bound = Bound::kHbm;
  if (t_stream > t) t = t_stream, r.bound = Bound::kHbm;
  // Split-K: a second kernel reads the partial sums back and writes the result, after the first.
  const double reduce = split > 1 ? q.reduce_launch + (partials + q.c * q.batch) * q.inv_hbm_bw : 0;
  const double fixed = q.launch + q.tile_overhead * (stream_k ? std::min(r.waves, 1.0) + 1 : r.waves) + reduce;
  if (fixed > t) r.bound = Bound::kLaunch;
  r.time_s = fixed + t;
  return r;
}

// The largest split-K factor worth weighing for this tile: the one that fills every CTA slot
// (at most kMaxSplit), 1 where the recipe does not split K.
int max_split(const Problem& q, const TileSetup& s) {
  if (!q.split_k) return 1;
  return static_cast<int>(std::min(std::ceil(s.slots / (s.tm * s.tn * q.batch)), kMaxSplit));
}

GemmPlan make_plan(const Problem& q, const TileSetup& s, int split, const SplitCost& c, bool stream_k = false) {
  GemmPlan plan;
  plan.tile = *s.t;
  plan.split_k = split;
  plan.stream_k = stream_k;
  plan.ctas_per_sm = s.occ;
  plan.tiles = c.tiles;
  plan.waves = c.waves;
  plan.cost.time_s = c.time_s;
  plan.cost.bound = c.bound;
  plan.cost.flops = 2 * q.m * q.n * q.k * q.batch;
  plan.cost.bytes = (q.a + q.b + q.c) * q.batch;
  return plan;
}

}  // namespace

std::span<const GemmTile> gemm_tile_candidates() { return kTiles; }

GemmPlan gemm_plan_with(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n, double k,
                        double batch, const GemmTile& tile, int split_k, GemmRecipe recipe) {
  const Problem q = make_problem(gpu, p, dtype, m, n, k, batch, recipe);
  const double occ = occupancy(gpu, tile);
  const TileSetup s = setup(q, tile, std::max(occ, 1.0));
  GemmPlan plan = make_plan(q, s, std::max(1, split_k), with_split(q, s, std::max(1, split_k)));
  if (occ < 1) plan.cost.time_s = kInf, plan.ctas_per_sm = occ;
  return plan;
}

namespace {

// The best plan for one problem over the candidate tiles and split-K factors.
GemmPlan best_plan(const hw::GpuSpec& gpu, const Problem& q) {
  SplitCost best;
  const GemmTile* best_tile = &kTiles[0];
  int best_split = 1;
  bool best_stream_k = false;
  // Heuristic as cuBLAS's: a tile shorter than M is only used once M exceeds 128 rows (on the
  // Vidur tables BM = 64 tiles for 64 < M <= 128 would be predicted 10-20% too fast).
  const double min_bm = std::min(q.m, kMinRowsOfTallTiles);
  auto consider = [&](const TileSetup& s, int split, bool stream_k = false) {
    const SplitCost c = with_split(q, s, split, stream_k);
    if (c.time_s < best.time_s) best = c, best_tile = s.t, best_split = split, best_stream_k = stream_k;
  };
  auto try_tile = [&](const GemmTile& t) {
    if (t.bm < min_bm) return;
    const double occ = occupancy(gpu, t);
    if (occ < 1) return;
    const TileSetup s = setup(q, t, occ);
    // No split of this tile can beat the best so far when even its lower bound (one wave, all
    // SMs busy, no partial sums) does not.
    const double work = s.tm * s.tn * q.batch * q.k * s.mma_per_k * t.sms * q.inv_sms;
    if (q.launch + q.tile_overhead + std::max(work, s.hbm_unsplit * q.inv_hbm_bw) >= best.time_s) return;
    consider(s, 1);
    if (q.stream_k) consider(s, 1, true);
    // Split-K when the output tiles leave SMs idle: every factor up to the one that fills every
    // CTA slot. The candidates do not depend on K, and a larger M, N or batch only removes
    // factors, so a larger GEMM never gains an option a smaller one lacked (monotone times).
    const int splits = max_split(q, s);
    for (int split = 2; split <= splits; ++split) consider(s, split);
  };
  // Small M: the short tiles first (reverse order), so that the bound below prunes early.
  for (std::size_t i = 0; i < kTiles.size(); ++i)
    try_tile(q.m < kMinRowsOfTallTiles ? kTiles[kTiles.size() - 1 - i] : kTiles[i]);
  if (q.pair_tiles)  // Blackwell: the CTA-pair tiles as well
    for (const GemmTile& t : kBlackwellPairTiles) try_tile(t);
  return make_plan(q, setup(q, *best_tile, occupancy(gpu, *best_tile)), best_split, best, best_stream_k);
}

}  // namespace

GemmPlan gemm_plan(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n, double k,
                   double batch, GemmRecipe recipe) {
  return best_plan(gpu, make_problem(gpu, p, dtype, m, n, k, batch, recipe));
}

std::vector<GemmPlan> gemm_candidate_plans(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m,
                                           double n, double k, double batch, GemmRecipe recipe) {
  const Problem q = make_problem(gpu, p, dtype, m, n, k, batch, recipe);
  std::vector<GemmPlan> plans;
  auto add_tile = [&](const GemmTile& t) {
    const double occ = occupancy(gpu, t);
    if (occ < 1) return;
    const TileSetup s = setup(q, t, occ);
    const int splits = std::max(1, max_split(q, s));
    for (int split = 1; split <= splits; ++split) plans.push_back(make_plan(q, s, split, with_split(q, s, split)));
    if (q.stream_k) plans.push_back(make_plan(q, s, 1, with_split(q, s, 1, true), true));
  };
  for (const GemmTile& t : kTiles) add_tile(t);
  if (q.pair_tiles)
    for (const GemmTile& t : kBlackwellPairTiles) add_tile(t);
  return plans;
}

KernelCost gemm_time(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n, double k,
                     double batch, GemmRecipe recipe) {
  if (gpu.host_cpu) {  // a CPU device: the CPU GEMM model (models/cpu/cpu_kernels.hpp)
    const hw::CpuSpec& cpu = *gpu.host_cpu;
    return cpu_gemm_kernel(cpu, cpu_params_or_defaults(cpu, p.cpu), dtype, m, n, k, batch);
  }
  return gemm_plan(gpu, p, dtype, m, n, k, batch, recipe).cost;
}

KernelCost grouped_gemm_time(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n,
                             double k, double groups, GemmRecipe recipe) {
  if (gpu.host_cpu) return gemm_time(gpu, p, dtype, m, n, k, groups, recipe);
  return best_plan(gpu, make_problem(gpu, p, dtype, m, n, k, groups, recipe, p.moe_gemm_efficiency_for(dtype, recipe),
                                     p.moe_gemm_hbm_efficiency_for(dtype, recipe)))
      .cost;
}

KernelCost gemm_op(const hw::GpuSpec& gpu, const KernelParams& p, const GemmFormat& format, double m, double n, double k,
                   double batch) {
  const KernelCost cast = input_cast(gpu, p, format.cast, format.dtype, m * batch, k);
  KernelCost c = gemm_time(gpu, p, format.dtype, m, n, k, batch, format.recipe);
  c.time_s = cast.time_s + c.time_s;
  c.flops += cast.flops, c.bytes += cast.bytes;
  return c;
}

}  // namespace exasim::models
