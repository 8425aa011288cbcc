#pragma once
// Named, calibratable parameters of the CPU kernel models (models/cpu/): what the memory levels
// deliver to one core and to all cores, their load-to-use latencies, how close GEMM gets to the
// SIMD FMA peak, and the fixed costs of a call. Defaults come from the spec (cpu_params.cpp);
// `exasim calibrate` fits them to exasim-bench measurements of a real CPU.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "hw/cpu_spec.hpp"

namespace exasim::models {

// The memory levels a working set can live in, nearest first.
enum class CpuLevel { kL1, kL2, kL3, kDram };
inline constexpr std::array<CpuLevel, 4> kCpuLevels = {CpuLevel::kL1, CpuLevel::kL2, CpuLevel::kL3, CpuLevel::kDram};
std::string_view cpu_level_name(CpuLevel l);  // "l1", "l2", "l3", "dram"

// Sustained bandwidth of one level for reads and for writes (B/s). Writes usually cost more:
// a store that misses first reads the line (write-allocate) and later writes it back.
// `read` and `write` are the two costs of a kernel that reads and writes (STREAM's copy, scale,
// add), additive per byte. A stream that only reads (a reduction; a matrix-vector product's
// matrix; decode attention's KV cache) runs at `read_only`, measured by exasim-bench's read
// kernel: with no stores in flight beside its loads a core moves less than `read` suggests (a Xeon
// VM of 2026-12-07, one core: 12.4 GB/s read-only from DRAM where copy and add put `read` at
// 19 GB/s). 0 where nothing measured it: `read` is used.
struct LevelBandwidth {
  double read = 0;
  double write = 0;
  double read_only = 0;
};

struct CpuGemmParams {
  double efficiency_fp32 = 0.8;  // achieved / SIMD FMA peak at the spec clock (fp32; fp16/bf16 too)
  double efficiency_fp64 = 0.8;  // the same for fp64
  double traffic_factor = 1.0;   // bytes moved / the packing algorithm's nominal traffic
  double overhead_s = 0;         // per call (blocking set-up, buffers; fork and join on threads)
  // A matrix-vector product reads its matrix once, but as several concurrent streams (one per
  // column of a block) rather than the read kernel's one: its time over the read-only transfer
  // time of its operands (above 1 when the prefetchers keep fewer lines in flight).
  double matrix_vector_factor = 1.0;
};

struct CpuParams {
  // Capacities (bytes): L1d and L2 per core, L3 per socket (or per L3 domain that one job sees).
  double l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;
  // How much of a level's capacity a working set can use before it spills to the next level, as a
  // fraction (conflicts, other lines, replacement policy; a VM may share its L3 with neighbours).
  std::array<double, 3> effective_capacity = {1.0, 1.0, 1.0};  // l1, l2, l3
  // How abruptly a streamed working set falls out of a level once it exceeds the effective
  // capacity C: the level serves min(1, C / W)^sharpness of the accesses. 1 is what random
  // replacement gives; LRU-like policies, which evict a cyclic stream entirely, are sharper.
  std::array<double, 3> sharpness = {1.0, 1.0, 1.0};
  int all_threads = 1;                    // the thread count of `all_cores`
  std::array<LevelBandwidth, 4> one_core; // by CpuLevel, one thread
  std::array<LevelBandwidth, 4> all_cores;// by CpuLevel, all_threads threads
  double loop_overhead_s = 0;             // per memory-bound call on one thread (loop start, tail)
  double fork_join_s = 0;                 // extra per call when it runs on more than one thread
  std::array<double, 4> latency_s = {};   // load-to-use latency by CpuLevel (dependent loads)
  // GEMM, fitted separately for one core and for all cores: with every core busy the clock is
  // lower (all-core turbo) and L3 and DRAM are shared, so the efficiencies differ.
  CpuGemmParams gemm_one_core;
  CpuGemmParams gemm_all_cores;
  // The GEMM micro-kernel's register block (Goto and van de Geijn 2008; Eigen's gebp kernel,
  // Eigen/src/Core/products/GeneralBlockPanelKernel.h): rows of A in panels of up to this many
  // SIMD vectors (then half and quarter vectors, then single rows), columns of B in groups of
  // `micro_kernel_columns`; each k step of a panel loads its vectors and the group's B elements
  // through `load_ports` and issues vectors x columns FMAs. Eigen 3.4: 3 vectors x 4 columns.
  // Load pipes per core: 3 on AMD Zen 3/4 (AMD 57647) and Intel Golden Cove and later (Intel
  // 64 and IA-32 Optimization Reference Manual); 2 on Haswell to Ice Lake. With 3, every pass
  // is FMA-bound and a pass of a few rows costs as much as one of a whole vector.
  double micro_kernel_vectors = 3;
  double micro_kernel_columns = 4;
  double load_ports = 3;
  // Whether the BLAS spreads a matrix-vector product (m or n = 1) over threads. Eigen 3.4 does not
  // (only its GEMM is parallel: Eigen/src/Core/products/Parallelizer.h); MKL and OpenBLAS do.
  bool matrix_vector_parallel = false;
  std::string source;                     // "defaults from spec ...", or the calibration file

  // Values derived from a spec alone, for CPUs nobody has measured (each with its basis).
  static CpuParams defaults_for(const hw::CpuSpec& cpu);
};

// Name/value view for calibration files and reports: "memory.all_cores.dram.read" in "B/s", ...
struct CpuParamRef {
  std::string name;
  double* value;
  std::string unit;       // "B/s", "s", "B", "fraction", "factor"
  bool optional = false;  // a file may leave it out (added after files were written); 0 then
};
std::vector<CpuParamRef> named_params(CpuParams& p);

}  // namespace exasim::models
