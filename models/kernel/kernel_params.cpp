#include "models/kernel/kernel_params.hpp"

namespace exasim::models {

KernelParams KernelParams::defaults_for(const hw::GpuSpec& gpu) {
  KernelParams p;
  // Ampere: fitted (scripts/fit_roofline_vidur.py) to the 63,903 measured A100-80GB kernel times of
  // shared/data/profiles/a100_*_ops.csv (Vidur, PyTorch/cuBLAS, bf16): QKV, attention output, MLP
  // up and down GEMMs of 7 models at 1..16k tokens and TP 1..8. Three numbers, mean absolute error
  // 7.8% (the datasheet roofline: 33.9%): matrix 0.71 of 312 TFLOP/s, HBM 0.76 of 2039 GB/s,
  // 8 us fixed cost per kernel (launch, prologue, the tail of a partial wave).
  // Other families have no measured tables yet: their matrix efficiency is the maximum achievable
  // matmul over the dense peak (ml-engineering "MAMF", shared/validation/gpu_specs.yaml: H100
  // 794.5/989 = 0.803, B200 1745/2250 = 0.776, MI300X 668.4/1307.4 = 0.511) scaled by the ratio
  // that A100 shows between workload shapes and MAMF (0.71 / 0.869 = 0.82); HBM and overhead as A100.
  const double workload_over_mamf = 0.71 / 0.869;
  p.hbm_efficiency = 0.76;
  p.launch_overhead_s = 8e-6;
  const std::string& arch = gpu.architecture;
  if (arch == "ampere") {
    p.matrix_efficiency = 0.71;
    p.source = "family default (ampere): fitted to A100 op tables (matrix 0.71, HBM 0.76, 8 us)";
  } else if (arch == "hopper") {
    p.matrix_efficiency = 0.803 * workload_over_mamf;
    p.source = "family default (hopper): MAMF 0.803 x 0.82, HBM 0.76, 8 us";
  } else if (arch == "blackwell") {
    p.matrix_efficiency = 0.776 * workload_over_mamf;
    p.source = "family default (blackwell): MAMF 0.776 x 0.82, HBM 0.76, 8 us";
  } else if (arch == "cdna3" || arch == "cdna2") {
    p.matrix_efficiency = 0.511 * workload_over_mamf;
    p.source = "family default (cdna): MAMF 0.511 x 0.82, HBM 0.76, 8 us";
  } else {
    p.matrix_efficiency = 0.71;
    p.source = "generic default: the A100 fit";
  }
  return p;
}

std::vector<NamedParam> named_params(KernelParams& p) {
  return {{"matrix_efficiency", &p.matrix_efficiency, "fraction"},
          {"vector_efficiency", &p.vector_efficiency, "fraction"},
          {"hbm_efficiency", &p.hbm_efficiency, "fraction"},
          {"launch_overhead", &p.launch_overhead_s, "s"}};
}

}  // namespace exasim::models
