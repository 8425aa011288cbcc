// cuBLASLt tile identifiers as tile shapes, against cublasLt.h of CUDA 13.0 (cublasLtMatmulTile_t).
#include "hw/profile/cublaslt_tiles.hpp"

#include <doctest/doctest.h>

using exasim::hw::cublaslt_tile_shape;

TEST_CASE("cublaslt tiles: identifiers read as cublasLt.h numbers them") {
  using P = std::pair<int, int>;
  CHECK(cublaslt_tile_shape(1) == P{8, 8});          // CUBLASLT_MATMUL_TILE_8x8 = 1
  CHECK(cublaslt_tile_shape(18) == P{128, 64});      // CUBLASLT_MATMUL_TILE_128x64 = 18
  CHECK(cublaslt_tile_shape(20) == P{128, 128});     // CUBLASLT_MATMUL_TILE_128x128 = 20
  CHECK(cublaslt_tile_shape(24) == P{256, 128});     // CUBLASLT_MATMUL_TILE_256x128 = 24
  CHECK(cublaslt_tile_shape(31) == P{192, 128});     // CUBLASLT_MATMUL_TILE_192x128 = 31
  CHECK(cublaslt_tile_shape(59) == P{24, 64});       // CUBLASLT_MATMUL_TILE_24x64 = 59
  CHECK(cublaslt_tile_shape(634) == P{512, 1024});   // the last of CUDA 13.0
  CHECK_FALSE(cublaslt_tile_shape(0).has_value());   // CUBLASLT_MATMUL_TILE_UNDEFINED
  CHECK_FALSE(cublaslt_tile_shape(635).has_value()); // a newer CUDA's
  CHECK_FALSE(cublaslt_tile_shape(-1).has_value());
}
