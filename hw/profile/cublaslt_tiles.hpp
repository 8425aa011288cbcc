#pragma once
// cuBLASLt's tile identifiers (cublasLtMatmulTile_t, CUBLASLT_ALGO_CONFIG_TILE_ID) as CTA tile shapes:
// the native runner records which tile cuBLASLt's heuristic chose for each GEMM, and the kernel
// calibration compares it with the tile the model picks. Kept in exasim_hw (not behind CUDA) so
// that profiles read anywhere and the table is tested without a GPU.
#include <optional>
#include <utility>

namespace exasim::hw {

// {rows, columns} of the output tile for identifier `id` (1 = 8x8 ... 634 = 512x1024, CUDA 13.0's
// cublasLt.h); nullopt for 0 (undefined) and identifiers past the table (a newer CUDA).
std::optional<std::pair<int, int>> cublaslt_tile_shape(int id);

}  // namespace exasim::hw
