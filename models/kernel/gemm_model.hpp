#pragma once
// Tile-level GEMM model. A GEMM runs as CTA tiles of BM x BN outputs, each looping over K in
// steps that stream A and B operand slices from HBM through L2 into shared memory, where the
// warps' matrix instructions read them. For each candidate tile (the CUTLASS/cuBLAS Ampere
// and Hopper configurations) and split-K factor the model counts
//   tiles = ceil(M/BM) ceil(N/BN) batch splits, distributed round-robin over the SMs
//   waves  = ceil(tiles / (SMs x resident CTAs per SM))  (occupancy from SMEM, registers, warps)
// and charges the longest of
//   matrix   ceil(tiles/SMs) tile-FLOPs (padded to the tile) over the per-SM matrix rate
//   smem     the warps' operand reads over the per-SM shared-memory bandwidth
//   l2       every tile's operand slices over the L2 bandwidth (Hopper: two-CTA clusters read
//            each B slice once and multicast it to both)
//   hbm      A and B once if they fit in L2, else once per wave block that needs them (a wave
//            covers the squarest block of tiles, as CUTLASS's swizzle does), plus C and the
//            fp32 split-K partials, over the achieved HBM bandwidth
//   stream   Little's law per CTA: its operand bytes with (stages - 1) slices in flight per
//            loaded memory latency (why long K on few tiles needs split-K)
// where the on-chip terms (matrix, smem, l2) slow down to the sustained clock fraction once
// they run longer than the power window (an A100 at 400 W cannot hold boost clock under full
// tensor-core load: on the Vidur tables, GEMMs over ~1 ms came out 4-8% slower than a model
// fitted without this term predicted, shorter ones 0-5% faster),
// plus a launch overhead and a prologue/epilogue per wave. The tile and split-K with the
// least time are chosen, as a heuristic that knew the hardware would, except that tiles shorter
// than M are not used below M = 128 (cuBLAS keeps one row of tiles there), a Stream-K plan on
// Hopper pays for padding in MMA N steps of 16 along one side rather than whole tiles
// (kMmaNStep), and block-scaled GEMMs never split K (DeepGEMM, and NVFP4 on CUTLASS: one CTA per
// output tile; splits_k).
// Blackwell (tcgen05): the tensor cores read both operands from shared memory themselves, so the
// smem term does not apply; CTA-pair tiles (256 x 128, 256 x 256 over two SMs) join the
// candidates; fp4 operands (NVFP4) carry one 1-byte scale per 16 values in the L2/HBM terms.
#include <span>
#include <vector>

#include "hw/dtype.hpp"
#include "hw/gpu_spec.hpp"
#include "models/kernel/gemm_recipe.hpp"
#include "models/kernel/kernel_cost.hpp"
#include "models/kernel/kernel_params.hpp"

namespace exasim::models {

struct GemmTile {
  int bm = 128, bn = 128;  // outputs per CTA
  int warps = 4;           // warps per CTA, laid out as warp_rows x (warps / warp_rows)
  int warp_rows = 2;
  int stages = 4;          // shared-memory pipeline depth (multi-stage cp.async / TMA)
  int sms = 1;             // SMs computing the tile together: 2 for Blackwell's CTA-pair MMA
                           // (tcgen05 cta_group::2), each SM holding BM/2 x BN of it
};

// The candidate set (CUTLASS sm80 defaults for 16-bit operands, plus short tiles for skinny
// GEMMs). 256x64 and 64x256 are left out: cuBLAS does use a 64-token x 256 tile at 64..511
// tokens (the Vidur times step at multiples of 64 tokens there), but adding it, with or
// without allowing 64-row tiles above M = 128, did not lower the held-out error (6.2% ->
// 6.2..6.9%): the best-of-candidates choice is then faster than cuBLAS's heuristic elsewhere.
// BK is 64 bytes of K per stage for every dtype (32 bf16, 64 fp8, 16 fp32 elements).
std::span<const GemmTile> gemm_tile_candidates();

struct GemmPlan {
  GemmTile tile;
  int split_k = 1;
  bool stream_k = false;   // Stream-K: persistent CTAs share the K iterations evenly (Hopper, Blackwell)
  double tiles = 0;        // CTAs launched (incl. batch and splits)
  double waves = 0;        // ceil(tiles / (SMs x CTAs per SM))
  double ctas_per_sm = 0;  // occupancy of this tile
  KernelCost cost;
};

// The best plan over the candidate tiles and split-K factors.
GemmPlan gemm_plan(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n, double k,
                   double batch = 1, GemmRecipe recipe = GemmRecipe::kDense);
// Every plan the search could weigh: each candidate tile that fits on an SM (the Blackwell
// CTA-pair tiles too), with split-K 1 up to the factor that fills every CTA slot, and without
// the heuristic's rule on short tiles. For reports of how much the tile choice decides (the
// plan closest to a measured time bounds what a better tile heuristic could gain).
std::vector<GemmPlan> gemm_candidate_plans(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m,
                                           double n, double k, double batch = 1,
                                           GemmRecipe recipe = GemmRecipe::kDense);
// One tile and split-K factor, for tests and reports. cost.time_s is infinite when the tile
// does not fit on an SM.
GemmPlan gemm_plan_with(const hw::GpuSpec& gpu, const KernelParams& p, DType dtype, double m, double n, double k,
                        double batch, const GemmTile& tile, int split_k,
                        GemmRecipe recipe = GemmRecipe::kDense);

}  // namespace exasim::models
