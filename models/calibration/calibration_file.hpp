#pragma once
// Calibration files (configs/calibration/*.yaml): fitted model parameters that replace the
// per-family defaults.
//   gpu, date, source:  what was fitted, when, to which measurements (text)
//   kernel:     any name of named_params() (kernel_params.hpp): matrix_efficiency,
//               hbm_efficiency, l2_efficiency, launch_overhead, tile_overhead, ...; the per-op
//               memory parameters as maps: memory_op_efficiency: {default: 0.75, rmsnorm: 0.37}
//               (a plain number sets the default). Times carry units ("2.7 us").
//   collective: see models/collective/collective_params.hpp
//   training:   the training framework's host overheads (micro_batch_overhead, iteration_overhead,
//               expert_dispatch_overhead) and sharded_collective_efficiency
//   fit:        what the fit reported (samples, errors per bucket); informational, not read
#include <string>
#include <vector>

#include "hw/config/node.hpp"
#include "models/collective/collective_model.hpp"
#include "models/kernel/kernel_params.hpp"

namespace exasim::models {

// Host (framework) work a training step may wait for: dispatching each micro-batch's forward and
// backward passes on a GPU (data loader, Python, kernel launches; half before each pass), which
// the host runs ahead of the GPU, so it shows only where it is the slower side; and the end of
// the iteration (logging, loss reporting, zero_grad) after the optimizer step. Zero unless a
// calibration states them: no measurement in shared/ isolates them.
//
// expert_dispatch_s: host time per routed expert a GPU holds, per MoE layer, in a forward pass
// (twice in a backward: input and weight gradients). Megatron-Core's all-to-all dispatcher syncs
// the host on each layer's token counts, so the host cannot run ahead of it; Transformer
// Engine's grouped linear then issues every local expert's GEMMs and FP8 casts from Python. The
// expert GEMMs wait for nothing but the next step waits for both. Default 0.148 ms: fitted on one
// run (Megatron-Bridge 25.11, B200, Qwen3-30B-A3B, 8 GPUs, one stage: -70% -> -0.0%; refitted from
// 0.16 ms once the expert all-to-alls stopped running beside the kernels that produce their tokens
// and the dispatcher's token-count gather and by-expert sorts were costed)
// and checked on the other MoE runs of validate/cases (mbridge-25.11-*.yaml, mbridge-25.09.yaml).
// Caution: the same Qwen3-30B-A3B recipes in the 25.09 archive (token-drop) ran 2.0x faster on
// H100 and 1.9x on B200 (10494 and 18066 tokens/s per GPU against 5275 and 9299) but not on GB200
// at micro-batch 4 (22775 against 23766): no one constant fits both releases; this one describes
// the 25.11 dropless path (B200 25.09: +90%; H100 25.11: -48%).
//
// sharded_collective_efficiency: the fraction of the network model's collective rate that the
// framework's ZeRO collectives reach, those over a shard group (ZeRO-1/2's gradient
// reduce-scatter and weight all-gather, ZeRO-3/FSDP's gathers and reduce-scatters, dense and
// expert; not DDP's all-reduce) (1: NCCL rings over every rail of a node, as the network model
// predicts). An implementation property, not a hardware one: DeepSpeed's 2021 ZeRO-3 on Selene
// ran its gathers at a per-GPU rate about a tenth of that (configs/calibration/
// deepspeed-zero3-2021-selene.yaml, fitted on one run; checked on five SC'21 runs and MT-NLG's three).
struct HostOverheads {
  double micro_batch_s = 0;
  double iteration_s = 0;
  double expert_dispatch_s = 148e-6;
  double sharded_collective_efficiency = 1;
};

struct Calibration {
  KernelParams kernel;
  CollectiveParams collective;
  HostOverheads host;
};

// Applies the keys present in `node` (a mapping) on top of `base`.
Calibration apply_calibration(Calibration base, const config::Node& node);
Calibration load_calibration(Calibration base, const std::string& path);

// What a calibration file says besides the parameters.
struct CalibrationHeader {
  std::string gpu;
  std::string date;     // YYYY-MM-DD
  std::string source;   // the measurements, e.g. "Vidur op tables a100_*_ops.csv (3 models)"
  std::vector<std::pair<std::string, std::string>> fit;  // key -> text, written under fit:
};

// The kernel section as YAML text (the `names` given, or every parameter that differs from
// `defaults` when names is empty), with units. Deterministic: fixed order, fixed precision.
std::string kernel_calibration_yaml(const KernelParams& p, const std::vector<std::string>& names);

// The kernel parameters a file written from `fitted` (its `names`) gives when read over `base`:
// what every command that reads the file runs on (values at the written precision; what the file
// leaves out derived as the reader derives it, e.g. fp8's family shortfall).
KernelParams kernel_params_as_written(const KernelParams& base, const KernelParams& fitted,
                                      const std::vector<std::string>& names);

// The collective section as YAML text: the `names` given (collective_param_slots()), with units.
std::string collective_calibration_yaml(const CollectiveParams& p, const std::vector<std::string>& names);

// Writes a whole calibration file: `comment` (one line, what fitted it), the header, then
// `sections` (YAML text, e.g. kernel_calibration_yaml). Throws IoError when it cannot be written.
void write_calibration_file(const std::string& path, const CalibrationHeader& header, const std::string& comment,
                            const std::string& sections);
// A kernel calibration file (kernel_fit.hpp).
void write_calibration(const std::string& path, const CalibrationHeader& header, const KernelParams& p,
                       const std::vector<std::string>& names);

}  // namespace exasim::models
