#include "models/kernel/kernel_params.hpp"

namespace exasim::models {

KernelParams KernelParams::defaults_for(const hw::GpuSpec& gpu) {
  KernelParams p;
  // Matrix efficiency: maximum achievable matmul FLOP/s over the dense peak (ml-engineering
  // "MAMF" benchmark, shared/validation/gpu_specs.yaml): A100 271.2/312 = 0.869,
  // H100 794.5/989 = 0.803, B200 1745/2250 = 0.776, GB200 1822/2450 = 0.744 (use 0.77 for
  // Blackwell), MI300X 668.4/1307.4 = 0.511.
  // HBM efficiency: streaming copy/read bandwidth over datasheet: A100-80GB read 1598.5 of
  // 2039 GB/s = 0.78 (ChipBenchmarker, gpu_specs.yaml); Hopper/Blackwell/CDNA assumed alike
  // until calibrated (stated default, not measured).
  // Launch overhead: ~4 us per kernel, the usual CUDA launch + tail cost without CUDA graphs
  // (stated default; calibration fits it).
  const std::string& arch = gpu.architecture;
  if (arch == "ampere") {
    p.matrix_efficiency = 0.869;
    p.hbm_efficiency = 0.78;
    p.source = "family default (ampere): MAMF 0.869, HBM read 0.78";
  } else if (arch == "hopper") {
    p.matrix_efficiency = 0.803;
    p.hbm_efficiency = 0.80;
    p.source = "family default (hopper): MAMF 0.803, HBM 0.80 assumed";
  } else if (arch == "blackwell") {
    p.matrix_efficiency = 0.77;
    p.hbm_efficiency = 0.80;
    p.source = "family default (blackwell): MAMF 0.776/0.744, HBM 0.80 assumed";
  } else if (arch == "cdna3" || arch == "cdna2") {
    p.matrix_efficiency = 0.51;
    p.hbm_efficiency = 0.75;
    p.source = "family default (cdna): MAMF 0.511 (MI300X, ROCm 6.3), HBM 0.75 assumed";
  } else {
    p.source = "generic default: matrix 0.85, HBM 0.80";
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
